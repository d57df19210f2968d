import CourierDomain
import CourierLinux

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What this build of `courier` is: its version (the one place it is written) and the
/// adapters the composition root can pick, with the default of each.
package enum BuildInfo {
  /// The version of Courier's tools (`ToolsVersion`, shared with `courier-tui`).
  package static var version: String { ToolsVersion.current }

  /// One kind of adapter: what the build has and what it picks when nothing is configured.
  package struct Adapters: Sendable, Equatable {
    /// The name of the kind, plural: `transports`.
    package var kind: String
    /// The adapters, by the name configuration uses.
    package var available: [String]
    /// The one used when nothing is configured.
    package var defaultName: String
  }

  /// The adapters of this build, by kind, in a fixed order.
  package static var adapters: [Adapters] {
    [
      Adapters(
        kind: "transports", available: CourierConfig.TransportAdapter.allCases.map(\.rawValue),
        defaultName: CourierConfig.defaultTransport.rawValue),
      Adapters(
        kind: "stores", available: CourierConfig.StoreAdapter.allCases.map(\.rawValue),
        defaultName: CourierConfig.defaultStore.rawValue),
      Adapters(
        kind: "path_monitors",
        available: CourierConfig.PathMonitorAdapter.allCases.map(\.rawValue),
        defaultName: CourierConfig.defaultPathMonitor.rawValue),
      // One compressor, libvips, loaded with dlopen on the first compression.
      Adapters(kind: "compressors", available: ["vips"], defaultName: "vips"),
    ]
  }

  /// `courier 0.1.0 (transports: curl, urlsession, memory; default curl; …)`.
  package static var line: String {
    let parts = adapters.map { adapters in
      // By hand: Foundation's replacingOccurrences bridges through NSString, a third of what
      // `--version` cost.
      let kind = String(adapters.kind.map { $0 == "_" ? " " : $0 })
      return
        "\(kind): \(adapters.available.joined(separator: ", ")); default \(adapters.defaultName)"
    }
    return "courier \(version) (\(parts.joined(separator: "; ")))"
  }

  /// The same as one JSON object: `{"version": …, "transports": {"available": […],
  /// "default": …}, …}`.
  package static var json: String {
    var object: [String: JSONValue] = ["version": .string(version)]
    for adapters in adapters {
      object[adapters.kind] = .object([
        "available": .strings(adapters.available), "default": .string(adapters.defaultName),
      ])
    }
    return JSONLine.encode(object)
  }
}
