import CourierDomain
import Testing

@testable import CourierCLI

/// Every kind of failure has the sysexits code the README promises.
@Suite("ExitCode")
struct ExitCodeTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let error: CourierError
    let code: Int32
    var testDescription: String { "\(error.kind) \(error.code ?? "-") → \(code)" }
  }

  static let rows: [Row] = [
    Row(error: CourierError(.business, status: 422, code: "validation_failed"), code: 65),
    Row(error: CourierError(.conflict, status: 409), code: 65),
    Row(error: CourierError(.fileUnavailable), code: 66),
    Row(error: CourierError(.offline), code: 69),
    Row(error: CourierError(.cannotReachHost), code: 69),
    Row(error: CourierError(.notTheServer, status: 302, code: "redirected_elsewhere"), code: 69),
    Row(error: CourierError(.unexpected), code: 70),
    Row(error: CourierError(store: StoreError(.cannotCreate, "x", path: "/d")), code: 73),
    Row(error: CourierError(store: StoreError(.io, "disk full", path: "/d/x")), code: 74),
    Row(error: CourierError(store: StoreError(.corrupt, "damaged", path: "/d/x")), code: 74),
    Row(error: CourierError(store: StoreError(.newerSchema, "newer", path: "/d/x")), code: 74),
    Row(error: CourierError(store: StoreError(.busy, "in use", path: "/d/x")), code: 75),
    Row(error: CourierError(.overloaded, status: 503), code: 75),
    Row(error: CourierError(.timedOut), code: 75),
    Row(error: CourierError(.invalidResponse), code: 76),
    Row(error: CourierError(.unauthorized, status: 401), code: 77),
    Row(error: CourierError(.cancelled), code: 130),
    Row(error: CourierError(.tls, code: "tls_pin_mismatch"), code: 69),
    Row(error: CourierError(.tls, code: "tls_untrusted"), code: 69),
    // Credentials refused over plain http: the configuration must change (decision 2431).
    Row(error: InsecureHTTP.refusal(host: "192.0.2.1"), code: 78),
  ]

  @Test("each kind exits with its sysexits code", arguments: rows)
  func code(_ row: Row) {
    #expect(ExitCode.forError(row.error).rawValue == row.code)
  }

  @Test("a store failure names its file and says what to do")
  func storeMessage() {
    let error = CourierError(
      store: StoreError(.corrupt, "The store /d/courier.sqlite is damaged.", path: "/d/x"))
    #expect(error.kind == .localStore)
    #expect(error.userMessage.contains("/d/courier.sqlite"))
    #expect(error.userMessage.contains("Move the file aside"))
    #expect(!error.isTransient)
  }
}
