#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether this machine's loopback link is up: all a server on this machine needs, where the
/// path monitor's rule looks at the other links. Asked once, without a netlink subscription.
package enum LoopbackLink {
  /// Whether a loopback interface is up and running; true when that cannot be told, so that
  /// nothing is skipped on a doubt.
  package static func isUp() -> Bool {
    #if os(Linux)
      // Linux gives every network namespace one loopback, `lo`: its flags in one `ioctl`,
      // where `getifaddrs` dumps every link and address over netlink (decision 1410). Renamed
      // (or not a loopback), every interface is looked at.
      if let flags = flags(of: "lo"), flags & Int32(IFF_LOOPBACK) != 0 {
        let wanted = Int32(IFF_UP | IFF_RUNNING)
        return flags & wanted == wanted
      }
    #endif
    return anyIsUp()
  }

  #if os(Linux)
    /// An interface's flags (`SIOCGIFFLAGS`), or nil when it cannot be asked or does not exist.
    /// - Parameter name: the interface's name.
    /// - Returns: the flags.
    package static func flags(of name: String) -> Int32? {
      let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { return nil }
      defer { _ = Glibc.close(fd) }
      var request = ifreq()
      let bytes = Array(name.utf8)
      guard bytes.count < MemoryLayout.size(ofValue: request.ifr_ifrn.ifrn_name) else { return nil }
      withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { buffer in
        buffer.copyBytes(from: bytes)
      }
      guard ioctl(fd, UInt(SIOCGIFFLAGS), &request) == 0 else { return nil }
      return Int32(request.ifr_ifru.ifru_flags)
    }
  #endif

  /// Whether any interface flagged loopback is up and running (`getifaddrs`); true when that
  /// cannot be told.
  package static func anyIsUp() -> Bool {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return true }
    defer { freeifaddrs(list) }
    var entry: UnsafeMutablePointer<ifaddrs>? = first
    while let current = entry {
      let flags = Int32(bitPattern: current.pointee.ifa_flags)
      let wanted = Int32(IFF_LOOPBACK | IFF_UP | IFF_RUNNING)
      if flags & wanted == wanted { return true }
      entry = current.pointee.ifa_next
    }
    return false
  }
}
