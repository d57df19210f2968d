import CourierLinux
import CourierTUI
import Foundation
import Testing

private let groff = installedTool("/usr/bin/groff")

@Suite("courier-tui(1), generated from TUIOptionTable")
struct TUIManPageTests {
  @Test("the page names the version and every option, roff-escaped")
  func page() {
    let page = TUIManPage.page
    #expect(page.hasPrefix(".TH COURIER\\-TUI 1 "))
    #expect(page.contains("courier-tui \(ToolsVersion.current)"))
    for option in TUIOptionTable.options {
      #expect(
        page.contains(option.name.replacingOccurrences(of: "-", with: "\\-")), "\(option.name)")
    }
    for line in page.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
      #expect(line.hasPrefix(".") && line.dropFirst().first?.isLetter == true, "\(line)")
    }
  }

  @Test("groff reads the page without a warning", .enabled(if: groff != nil))
  func renders() async throws {
    let file = try temporaryScript(TUIManPage.page, suffix: ".1")
    defer { try? FileManager.default.removeItem(at: file) }
    let (code, _, error) = try await runTool(groff ?? "", ["-man", "-ww", "-z", file.path])
    #expect(code == 0)
    #expect(error.isEmpty, "\(error)")
  }
}
