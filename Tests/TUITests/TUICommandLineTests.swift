import CourierTUI
import Testing

@Suite("TUICommandLine")
struct TUICommandLineTests {
  @Test(
    "parses the flags shared with courier",
    arguments: [
      ([], [:], false),
      (["--demo"], [:], true),
      (["--base-url", "http://10.0.0.1:8080"], ["base_url": "http://10.0.0.1:8080"], false),
      (
        ["--base-url=http://h:1", "--data-dir", "/d"],
        ["base_url": "http://h:1", "data_dir": "/d"], false
      ),
      (["--config", "/c.json", "--demo"], ["config": "/c.json"], true),
    ] as [([String], [String: String], Bool)])
  func parses(arguments: [String], flags: [String: String], demo: Bool) throws {
    #expect(try TUICommandLine.parse(arguments) == .run(flags: flags, demo: demo))
  }

  @Test("help wins", arguments: [["--help"], ["-h"], ["--demo", "-h"]])
  func help(arguments: [String]) throws {
    #expect(try TUICommandLine.parse(arguments) == .help)
  }

  @Test(
    "usage errors name the problem",
    arguments: [
      (["--bogus"], "unknown option “--bogus”."),
      (["extra"], "unexpected argument “extra”."),
      (["--base-url"], "--base-url needs a value."),
      (["--data-dir="], "--data-dir needs a non-empty value."),
      (["--config", "a", "--config", "b"], "--config is given twice."),
    ])
  func usageErrors(arguments: [String], message: String) {
    #expect(throws: TUIUsageError(message: message)) { try TUICommandLine.parse(arguments) }
  }
}

@Suite("ProgressThrottle")
struct ProgressThrottleTests {
  @Test("lets through at most one progress update per interval, and every phase change")
  func throttles() {
    var throttle = ProgressThrottle(interval: .milliseconds(100))
    let start = ContinuousClock.now
    func state(_ sent: Int64, _ phase: UploadPhase = .uploading) -> UploadState {
      UploadState(fileName: "a.jpg", sent: sent, total: 100, phase: phase)
    }
    var admitted: [Int64] = []
    // 1,000 updates over one second, one a millisecond.
    for millisecond in 0..<1000 {
      if throttle.admit(state(Int64(millisecond / 10)), at: start + .milliseconds(millisecond)) {
        admitted.append(Int64(millisecond / 10))
      }
    }
    #expect(admitted.count == 10)
    let succeeded = throttle.admit(state(100, .succeeded), at: start + .milliseconds(1001))
    let failed = throttle.admit(state(0, .failed(message: "x")), at: start + .milliseconds(1002))
    #expect(succeeded && failed)
  }
}
