/// What the terminal sent: a key, or a size report.
package enum InputEvent: Sendable, Hashable {
  /// A key.
  case key(Key)
  /// The terminal's new size (from an in-band resize report, `CSI 48;rows;cols;…t`, or from
  /// SIGWINCH in the event loop).
  case resize(TerminalSize)
}
