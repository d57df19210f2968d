import Testing

@testable import CourierLinux

/// Which servers `NetworkPaths.serverIsUnreachable()` judges by the loopback link alone.
@Suite("NetworkPaths")
struct NetworkPathsTests {
  @Test(
    "a host on this machine is told from any other",
    arguments: [
      ("localhost", true), ("LOCALHOST", true), ("api.localhost", true), ("127.0.0.1", true),
      ("127.8.9.10", true), ("::1", true), ("[::1]", true), ("example.com", false),
      ("10.0.0.1", false), ("localhost.example.com", false), ("128.0.0.1", false),
      ("[2001:db8::1]", false),
    ])
  func loopbackHosts(host: String, isLoopback: Bool) {
    #expect(NetworkPaths.isLoopback(host) == isLoopback)
  }
}
