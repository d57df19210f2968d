import CourierLinux

/// `courier-tui(1)` in roff (man(7) macros), from `TUIOptionTable` and the help's words:
/// `courier-tui manpage`, installed by `scripts/install`.
public enum TUIManPage {
  /// The whole page.
  public static var page: String {
    var lines = [
      ".TH COURIER\\-TUI 1 \"\" \"courier-tui \(ToolsVersion.current)\" \"User Commands\"",
      ".SH NAME",
      "courier\\-tui \\- the full\\-screen Courier interface",
      ".SH SYNOPSIS",
      ".B courier\\-tui",
      "[\\fIOPTIONS\\fR]",
      ".br",
      ".B courier\\-tui \\-\\-version",
      ".SH DESCRIPTION",
    ]
    lines += TUICommandLine.description.split(separator: "\n").map { escape(String($0)) }
    lines += [
      ".PP",
      "It reads the same configuration as \\fBcourier\\fR(1): defaults, then the config file, "
        + "then \\fBCOURIER_*\\fR variables, then these options. Sign in first with "
        + "\\fBcourier login\\fR, or set \\fBCOURIER_TOKEN\\fR.",
      ".SH OPTIONS",
    ]
    for option in TUIOptionTable.options {
      var head = "\\fB\(escape(option.name))\\fR"
      if let short = option.short { head += ", \\fB\(escape(short))\\fR" }
      if let value = option.value { head += " \\fI\(escape(value))\\fR" }
      lines += [".TP", head, escape(option.summary)]
    }
    lines += [
      ".SH KEYS",
      "Press \\fB?\\fR in the interface for the keys of each screen.",
      ".SH EXIT STATUS",
      "0 when it ends normally, 1 when it cannot start (no terminal, an unusable data folder), "
        + "64 for a usage error; killed by a signal, it dies of the same signal.",
      ".SH SEE ALSO",
      ".BR courier (1)",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// Text safe in roff: backslashes and hyphens escaped, a leading `.` or `'` neutralised.
  static func escape(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "\\": out += "\\e"
      case "-": out += "\\-"
      default: out.append(character)
      }
    }
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
  }
}
