import CDBusShim
import CourierDomain
import CourierPorts
import CourierSystem
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// NetworkManager's and systemd-networkd's path facts, read over the system D-Bus with
/// libsystemd's sd-bus, loaded with dlopen on first use (decision 2600): a program that never
/// asks for the path never maps libsystemd.
///
/// `run` owns a thread that connects (honouring `DBUS_SYSTEM_BUS_ADDRESS`), reads the facts,
/// then waits in `poll` on the bus and an eventfd for `PropertiesChanged` and
/// `NameOwnerChanged`, reading again after each. The service vanishing reads as
/// `noService`; the bus vanishing as `noBus`, and the thread reconnects every
/// ``reconnectInterval`` until it is back.
package final class DBusPathFacts: PathFactsSource {
  /// Which services to read.
  package enum Services: Sendable {
    /// NetworkManager when it owns its name, else systemd-networkd.
    case any
    /// NetworkManager only.
    case networkManager
    /// systemd-networkd only.
    case networkd

    var code: Int32 {
      switch self {
      case .any: Int32(COURIER_DBUS_WANT_ANY)
      case .networkManager: Int32(COURIER_DBUS_WANT_NETWORKMANAGER)
      case .networkd: Int32(COURIER_DBUS_WANT_NETWORKD)
      }
    }
  }

  /// How long the thread waits before connecting again after the bus went away.
  package static let reconnectInterval: Int32 = 500

  private let services: Services

  /// A source; nothing is loaded or connected until `snapshot()` or `run`.
  /// - Parameter services: which services to read.
  package init(services: Services = .any) { self.services = services }

  /// Connects, reads once and disconnects, on the calling thread (a local bus answers in well
  /// under a millisecond; each call is bounded at 2 s).
  /// - Returns: the facts, or why there are none.
  package func snapshot() async -> OSPathFacts {
    switch Self.connect(services) {
    case .failure(let failure): return failure.facts
    case .success(let connection):
      defer { courier_dbus_close(connection) }
      return Self.read(connection) ?? OSPathFacts(service: .noBus(Self.lost))
    }
  }

  /// Watches until the calling task is cancelled.
  /// - Parameter publish: called with the facts first, then each change.
  package func run(publish: @escaping @Sendable (OSPathFacts) -> Void) async {
    let wake = Wake()
    guard wake.fd >= 0 else {
      publish(OSPathFacts(service: .noBus("no eventfd: \(Self.describe(wake.fd))")))
      return
    }
    defer { wake.close() }
    let services = services
    await withTaskCancellationHandler {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DetachedThread.start(name: "courier-dbus") {
          Self.watch(services, wake: wake, publish: publish)
          done.resume()
        }
      }
    } onCancel: {
      wake.stop()
    }
  }

  // MARK: - The thread

  private static let lost = "the system bus closed the connection"

  private static func watch(
    _ services: Services, wake: Wake, publish: @Sendable (OSPathFacts) -> Void
  ) {
    var last: OSPathFacts?
    func emit(_ facts: OSPathFacts) {
      if facts != last { publish(facts) }
      last = facts
    }
    while !wake.isStopped {
      let connection: OpaquePointer
      switch connect(services) {
      case .failure(let failure):
        emit(failure.facts)
        if courier_dbus_load() != 0 {
          // No libsystemd: nothing will change while the process lives.
          _ = courier_dbus_sleep(wake.fd, -1)
          return
        }
        _ = courier_dbus_sleep(wake.fd, reconnectInterval)
        continue
      case .success(let opened): connection = opened
      }
      defer { courier_dbus_close(connection) }
      while !wake.isStopped {
        guard let facts = read(connection) else { break }
        emit(facts)
        let waited = courier_dbus_wait(connection, wake.fd, -1)
        if waited < 0 { break }
      }
      if wake.isStopped { return }
      emit(OSPathFacts(service: .noBus(lost)))
      _ = courier_dbus_sleep(wake.fd, reconnectInterval)
    }
  }

  private static func connect(_ services: Services) -> Result<OpaquePointer, OSFactsFailure> {
    guard courier_dbus_load() == 0 else {
      let why = String(cString: courier_dbus_load_error())
      return .failure(OSFactsFailure(service: .noBus("libsystemd could not be loaded: \(why)")))
    }
    var error: Int32 = 0
    guard let connection = courier_dbus_open(services.code, &error) else {
      return .failure(
        OSFactsFailure(service: .noBus("can't connect to the system bus: \(describe(error))")))
    }
    return .success(connection)
  }

  private static func read(_ connection: OpaquePointer) -> OSPathFacts? {
    var raw = courier_dbus_facts()
    guard courier_dbus_read(connection, &raw) >= 0 else { return nil }
    return facts(raw)
  }

  /// The C struct as the domain's value.
  static func facts(_ raw: courier_dbus_facts) -> OSPathFacts {
    switch Int(raw.service) {
    case Int(COURIER_DBUS_NETWORKMANAGER):
      let id = text(raw.primary_id)
      let type = text(raw.primary_type)
      let primary =
        id.isEmpty && type.isEmpty
        ? nil
        : OSPathFacts.PrimaryConnection(
          id: id, type: type, interface: text(raw.primary_interface))
      let portal = text(raw.captive_portal)
      return OSPathFacts(
        service: .networkManager, metered: .init(rawValue: raw.metered) ?? .unknown,
        connectivity: .init(rawValue: raw.connectivity) ?? .unknown, primary: primary,
        captivePortalAPI: portal.isEmpty
          ? nil : .init(url: portal, option: text(raw.captive_portal_option)))
    case Int(COURIER_DBUS_NETWORKD):
      return OSPathFacts(
        service: .networkd, onlineState: text(raw.online_state),
        operationalState: text(raw.operational_state))
    default:
      return OSPathFacts(service: .noService)
    }
  }

  /// A fixed C array holding a NUL-terminated string, as a String.
  private static func text<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { bytes in
      let end = bytes.firstIndex(of: 0) ?? bytes.count
      return String(decoding: bytes[..<end], as: UTF8.self)
    }
  }

  private static func describe(_ negativeErrno: Int32) -> String {
    String(cString: strerror(-negativeErrno))
  }
}

/// The facts to publish when no connection could be made (a `Result`'s failure).
struct OSFactsFailure: Error {
  let facts: OSPathFacts
  init(service: OSPathFacts.Service) { facts = OSPathFacts(service: service) }
}

/// The eventfd that wakes the thread, and the flag that stops it; closing and signalling share
/// a lock so a late signal never writes to a reused descriptor.
private final class Wake: Sendable {
  private let state: Mutex<(fd: Int32, stopped: Bool)>

  init() { state = Mutex((courier_dbus_wake_open(), false)) }

  var fd: Int32 { state.withLock { $0.fd } }
  var isStopped: Bool { state.withLock { $0.stopped } }

  func stop() {
    state.withLock { state in
      state.stopped = true
      if state.fd >= 0 { _ = courier_dbus_wake_signal(state.fd) }
    }
  }

  func close() {
    state.withLock { state in
      courier_dbus_wake_close(state.fd)
      state.fd = -1
    }
  }
}
