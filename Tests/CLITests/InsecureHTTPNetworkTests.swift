import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// Credentials over plain http to a host that is not loopback (decision 2431), on a real link
/// that never leaves the machine: the reference backend in one network namespace on
/// 10.213.0.1, the built `courier` in another, iptables counting every byte that reaches the
/// server's port. Refused, not a byte crosses; allowed by the setting, the login and the
/// session go through.
@Suite(
  "Credentials over plain http across a link", .serialized,
  .enabled(if: getuid() == 0, "network namespaces need root"))
struct InsecureHTTPNetworkTests {
  @Test("the password and the token never cross the link over plain http; allowed, they do")
  func acrossALink() async throws {
    let net = try await LinkedNamespaces(tag: "ih")
    defer { net.remove() }
    let backend = try await NamespacedBackend(in: net)
    defer { backend.stop() }
    let dir = try InProcessCLI.temporaryDirectory("courier-insecure-http")
    defer { CLIFixture.remove(dir) }
    try await net.countBytes(toPort: backend.port)
    let binary = try InProcessCLI.builtCourier()
    func courier(
      _ arguments: [String], input: String? = nil, environment: [String: String] = [:]
    ) async throws -> ChildProcess.Result {
      try await ChildProcess.run(
        net.inClient + [
          binary.path, "--base-url", backend.url.absoluteString, "--data-dir", dir.path,
          "--max-attempts", "1",
        ] + arguments, input: input,
        environment: [
          "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
          "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        ].merging(environment) { $1 })
    }
    let login = ["login", "--username", "alice", "--password-stdin"]

    let refused = try await courier(login, input: "secret\n")
    #expect(refused.status == 78, "\(refused)")
    #expect(refused.stderr.contains("allow_insecure_http"), "\(refused)")
    #expect(refused.stderr.contains("10.213.0.1"))
    let token = try await courier(["get", "/articles"], environment: ["COURIER_TOKEN": "tok"])
    #expect(token.status == 78, "\(token)")
    #expect(try await net.countedBytes() == 0)

    let allowed = try await courier(["--allow-insecure-http"] + login, input: "secret\n")
    #expect(allowed.succeeded, "\(allowed)")
    let afterLogin = try await net.countedBytes()
    #expect(afterLogin > 0)
    // The session it saved is refused again without the setting, before a byte is sent.
    let session = try await courier(["get", "/articles"])
    #expect(session.status == 78, "\(session)")
    #expect(try await net.countedBytes() == afterLogin)
    let list = try await courier(
      ["get", "/articles"], environment: ["COURIER_ALLOW_INSECURE_HTTP": "1"])
    #expect(list.succeeded, "\(list)")
    #expect(try await net.countedBytes() > afterLogin)
  }
}
