import CourierLinux

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier(1)` in roff (man(7) macros), from `CommandTable` (synopsis, commands, flags) and
/// `HelpText` (what each command does): `courier manpage`.
public enum ManPage {
  /// The whole page.
  public static var courier: String {
    var page = [
      ".TH COURIER 1 \"\" \"courier \(BuildInfo.version)\" \"User Commands\"",
      ".SH NAME",
      "courier \\- talk to your server over bad networks, without losing anything",
      ".SH SYNOPSIS",
      ".B courier",
      "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR]",
      ".br",
      ".B courier \\-\\-version",
      "[\\fB\\-\\-json\\fR]",
      ".SH DESCRIPTION",
    ]
    page += prose(section(of: HelpText.overview, upTo: "USAGE:"))
    page.append(".SH GLOBAL OPTIONS")
    page += (CommandTable.globalFlags + [CommandTable.versionFlag]).flatMap(item)
    page.append(".SH COMMANDS")
    for command in CommandTable.visibleCommands {
      page.append(".SS \(escape(command.name))")
      page.append(escape(command.summary) + ".")
      if let help = HelpText.text(for: command.name) {
        page += prose(section(of: help, upTo: "GLOBAL OPTIONS:", dropping: "OPTIONS:"))
      }
      let flags = command.flags + command.subcommands.flatMap(\.flags)
      var seen: Set<String> = []
      let unique = flags.filter { seen.insert($0.name).inserted }
      if !unique.isEmpty {
        page.append(".PP")
        page.append("Options:")
        page += unique.flatMap(item)
      }
    }
    page.append(".SH EXIT STATUS")
    page += prose(
      "EXIT CODES:" + (HelpText.overview.components(separatedBy: "EXIT CODES:").last ?? ""))
    page.append(".SH ENVIRONMENT")
    page.append(
      "Configuration is read in layers: defaults, then the config file, then these variables, "
        + "then the flags.")
    for key in ConfigLoader.keys {
      page += [".TP", ".B \(escape(key.environment))", "config key \\fB\(escape(key.key))\\fR"]
    }
    page += [
      ".TP", ".B COURIER_PASSWORD", "the password for \\fBcourier login\\fR",
      ".TP", ".B XDG_CONFIG_HOME",
      "where \\fIcourier/config.json\\fR is looked for (default \\fI~/.config\\fR)",
      ".TP", ".B XDG_DATA_HOME",
      "where the data folder \\fIcourier/\\fR lives (default \\fI~/.local/share\\fR)",
      ".SH FILES",
      ".TP", ".I $XDG_CONFIG_HOME/courier/config.json", "the configuration file",
      ".TP", ".I $XDG_DATA_HOME/courier/",
      "the session (\\fIsession.json\\fR, mode 0600), the local store and the outbox",
      ".SH SEE ALSO",
      ".BR courier\\-tui (1)",
    ]
    return page.joined(separator: "\n") + "\n"
  }

  /// The text of a help before `marker` (and without the block starting with `dropping`).
  static func section(of text: String, upTo marker: String, dropping: String? = nil) -> String {
    var body = text.components(separatedBy: "\n" + marker).first ?? text
    if let dropping, let range = body.firstRange(of: "\n" + dropping) {
      // The block runs to the next blank line.
      let rest = body[range.upperBound...]
      let end = rest.firstRange(of: "\n\n")?.lowerBound ?? rest.endIndex
      body.removeSubrange(range.lowerBound..<end)
    }
    return body
  }

  /// Paragraphs: a block of lines that starts with `USAGE:` or `EXAMPLE` or holds an indented
  /// line is kept as typed (`.nf`), any other is filled text (`.PP`).
  static func prose(_ text: String) -> [String] {
    var lines: [String] = []
    for block in text.components(separatedBy: "\n\n") {
      let blockLines = block.split(separator: "\n", omittingEmptySubsequences: true).map(
        String.init)
      guard let first = blockLines.first else { continue }
      let verbatim =
        first.hasPrefix("USAGE:") || first.hasPrefix("EXAMPLE")
        || blockLines.dropFirst().contains { $0.hasPrefix(" ") }
      if verbatim {
        lines += [".PP", ".nf"] + blockLines.map(escape) + [".fi"]
      } else {
        lines += [".PP"] + blockLines.map(escape)
      }
    }
    return lines
  }

  /// A `.TP` item for a flag.
  static func item(_ flag: CommandTable.Flag) -> [String] {
    var head = "\\fB\(escape(flag.name))\\fR"
    if let short = flag.short { head += ", \\fB\(escape(short))\\fR" }
    if let value = flag.value { head += " \\fI\(escape(value))\\fR" }
    if flag.repeatable { head += " (repeatable)" }
    return [".TP", head, escape(flag.summary)]
  }

  /// Text safe in roff: backslashes and hyphens escaped, a leading `.` or `'` neutralised.
  static func escape(_ text: String) -> String {
    var out = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
  }
}
