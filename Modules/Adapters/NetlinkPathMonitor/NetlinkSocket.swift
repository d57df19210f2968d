import CNetlink
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why the netlink monitor stopped or could not start.
package struct NetlinkMonitorError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What failed.
  package enum Code: String, Sendable, Hashable {
    /// Entering the network namespace failed.
    case namespace
    /// Opening, binding or configuring a socket failed.
    case socket
    /// A dump failed, was refused or timed out.
    case dump
    /// Receiving or waiting failed.
    case receive
  }

  /// What failed.
  package var code: Code
  /// The errno, 0 when none (a timeout).
  package var errno: Int32
  /// What was being done (`setns /var/run/netns/x`, `dump links`).
  package var context: String

  /// Creates an error.
  /// - Parameters:
  ///   - code: what failed.
  ///   - errno: the errno, 0 when none.
  ///   - context: what was being done.
  package init(code: Code, errno: Int32, context: String) {
    self.code = code
    self.errno = errno
    self.context = context
  }

  /// A message for a person.
  package var message: String {
    let reason = errno == 0 ? "timed out" : String(cString: strerror(errno))
    return "The network monitor could not \(context): \(reason)."
  }

  /// The message.
  package var description: String { message }
}

/// An eventfd that wakes the monitor's thread; closing and signalling share a lock so a late
/// cancellation can never write to a descriptor number reused by someone else.
final class WakeSignal: Sendable {
  private let descriptor: Mutex<Int32>

  init() throws(NetlinkMonitorError) {
    let fd = courier_eventfd_open()
    guard fd >= 0 else { throw NetlinkMonitorError(code: .socket, errno: -fd, context: "eventfd") }
    descriptor = Mutex(fd)
  }

  /// The descriptor, for poll (valid until `close()`).
  var fd: Int32 { descriptor.withLock { $0 } }

  func signal() {
    descriptor.withLock { fd in
      if fd >= 0 { _ = courier_eventfd_signal(fd) }
    }
  }

  func close() {
    descriptor.withLock { fd in
      if fd >= 0 { courier_close(fd) }
      fd = -1
    }
  }
}

/// One received datagram, or why there was none.
enum Receipt {
  case datagram([UInt8], sender: UInt32, truncated: Bool)
  case empty
  case overrun
}

/// A non-blocking NETLINK_ROUTE socket, owned by the monitor's thread.
struct NetlinkSocket: ~Copyable {
  let fd: Int32

  init(groups: UInt32, receiveBuffer: Int?) throws(NetlinkMonitorError) {
    let fd = courier_nl_open(groups, Int32(clamping: receiveBuffer ?? 0))
    guard fd >= 0 else {
      throw NetlinkMonitorError(code: .socket, errno: -fd, context: "open a netlink socket")
    }
    self.fd = fd
  }

  deinit { courier_close(fd) }

  /// The receive buffer the kernel granted.
  var receiveBufferSize: Int { Int(courier_nl_rcvbuf(fd)) }

  func requestDump(type: UInt16, sequence: UInt32) throws(NetlinkMonitorError) {
    let result = courier_nl_request_dump(fd, type, 0, sequence)
    guard result == 0 else {
      throw NetlinkMonitorError(code: .dump, errno: -result, context: "request a dump")
    }
  }

  func receive(into buffer: inout [UInt8]) throws(NetlinkMonitorError) -> Receipt {
    var sender: UInt32 = 0
    var truncated: Int32 = 0
    let count = buffer.withUnsafeMutableBytes {
      courier_nl_recv(fd, $0.baseAddress, $0.count, &sender, &truncated)
    }
    if count >= 0 {
      return .datagram(Array(buffer[0..<count]), sender: sender, truncated: truncated != 0)
    }
    switch Int32(-count) {
    case EAGAIN, EINTR: return .empty
    case ENOBUFS: return .overrun
    case let code: throw NetlinkMonitorError(code: .receive, errno: code, context: "receive")
    }
  }
}
