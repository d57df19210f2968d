import Testing

@testable import CourierNetlink

#if canImport(Glibc)
  import Glibc
#endif

/// The loopback link's state, asked once: `lo`'s flags, and every interface's as the fallback.
@Suite("LoopbackLink")
struct LoopbackLinkTests {
  #if os(Linux)
    @Test("the loopback's state from lo's flags is the one every interface tells")
    func loopbackFromItsFlags() throws {
      let flags = try #require(LoopbackLink.flags(of: "lo"), "no flags for lo")
      #expect(flags & Int32(IFF_LOOPBACK) != 0)
      #expect(LoopbackLink.isUp() == LoopbackLink.anyIsUp())
      #expect(LoopbackLink.flags(of: "courier-none0") == nil)
      #expect(LoopbackLink.flags(of: String(repeating: "l", count: 16)) == nil)
    }
  #endif
}
