// swift-tools-version:6.1
// Courier: an offline-first networking toolkit. Ports and adapters; see Docs/Architecture.md.
import PackageDescription

let strict: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny")
]

// The currency types of the transport port: HTTPRequest, HTTPResponse, HTTPFields (decision 2201).
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
// Logging and metrics with the application's backends (decision 2203): the library takes a
// `Logger` and a `MetricsFactory`, and never bootstraps either system. CoreMetrics (not Metrics,
// which adds Dispatch conveniences) is all the library needs.
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let coreMetrics: Target.Dependency = .product(name: "CoreMetrics", package: "swift-metrics")
// The fakes tests assert on: swift-log's and swift-metrics' own, shipped as library products.
let inMemoryLogging: Target.Dependency = .product(name: "InMemoryLogging", package: "swift-log")
let metricsTestKit: Target.Dependency = .product(name: "MetricsTestKit", package: "swift-metrics")

let package = Package(
  name: "Courier",
  // Synchronization's `Mutex` (used from the domain up) needs macOS 15, iOS 18 and their
  // siblings; on Linux any Swift 6 toolchain will do.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    // Domain, ports and use cases: pure Swift, no C library, portable to Apple platforms.
    .library(name: "Courier", targets: ["Courier"]),
    // The composition root with the Linux defaults (curl, netlink, SQLite, libvips), batteries
    // included. Re-exports `Courier`.
    .library(name: "CourierLinux", targets: ["CourierLinux"]),
    // One product per adapter.
    .library(name: "CourierMemory", targets: ["CourierMemory"]),
    .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
    .library(name: "CourierCurl", targets: ["CourierCurl"]),
    .library(name: "CourierNetlink", targets: ["CourierNetlink"]),
    .library(name: "CourierVips", targets: ["CourierVips"]),
    .library(name: "CourierSQLite", targets: ["CourierSQLite"]),
    .library(name: "CourierFileStore", targets: ["CourierFileStore"]),
    // Fakes for tests (re-exports `CourierMemory`).
    .library(name: "CourierTestKit", targets: ["CourierTestKit"]),
    // A swift-openapi-runtime `ClientTransport` through Courier's pipeline, and a bridge that
    // runs a runtime `ClientMiddleware` as a step of it (decision 2204).
    .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
    .executable(name: "courier", targets: ["courier"]),
    .executable(name: "courier-tui", targets: ["courier-tui"]),
  ],
  // URLSessionTransport (on by default): the composition root (CourierLinux) offers Foundation's
  // URLSession as a transport. Off, nothing in CourierLinux links swift-corelibs-foundation, whose
  // load costs every start about 0.7 ms (decision 1414): `scripts/release-build` builds the apps
  // with it off, since libcurl is their transport on Linux (0501). The product CourierURLSession
  // is there either way.
  traits: [
    .trait(
      name: "URLSessionTransport",
      description: "CourierLinux can pick Foundation's URLSession as its transport."),
    .default(enabledTraits: ["URLSessionTransport"]),
  ],
  // The ecosystem's currency types and APIs (issue 22): HTTP messages at the transport port,
  // logging and metrics with pluggable backends, the OpenAPI client transport, the CLI's parser.
  dependencies: [
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.14.0"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.10.1"),
    // Without its FullFoundation trait (as swift-openapi-generator itself declares it): the
    // runtime then imports FoundationEssentials only and parses dates with its format style
    // rather than corelibs' ISO8601DateFormatter (ICU), a quarter of a generated call's CPU
    // (decision 2204). A dependent that enables the trait gets it.
    .package(
      url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.11.0", traits: []),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
  ],
  targets: [
    // What Courier writes itself instead of taking it from Foundation or the system, shared by
    // every module and public in none (decision 2304): JSON bytes, RFC 3339 dates, SHA-256, text
    // scalar tables and number formatting, file handles, threads, the transports' error tables.
    .target(name: "CourierSystem", path: "Modules/System", swiftSettings: strict),
    // Pure values and decisions: no I/O, no FoundationNetworking. HTTP messages are
    // swift-http-types' (decision 2201).
    .target(
      name: "CourierDomain", dependencies: ["CourierSystem", httpTypes], path: "Modules/Domain",
      swiftSettings: strict),
    // Small protocols, speaking the domain's types.
    .target(
      name: "CourierPorts", dependencies: ["CourierSystem", "CourierDomain", httpTypes, logging],
      path: "Modules/Ports",
      swiftSettings: strict),
    // Use cases composed from ports.
    .target(
      name: "CourierCore",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", httpTypes, logging, coreMetrics,
      ],
      path: "Modules/Core",
      swiftSettings: strict),
    // The `Courier` product's one module: re-exports domain, ports and core, and HTTPTypes,
    // the port's currency.
    .target(
      name: "Courier", dependencies: ["CourierDomain", "CourierPorts", "CourierCore", httpTypes],
      path: "Modules/Courier", swiftSettings: strict),

    // Adapters, one per technology.
    .target(
      name: "CourierURLSession",
      dependencies: ["CourierSystem", "CourierDomain", "CourierPorts", httpTypes],
      path: "Modules/Adapters/URLSessionTransport", swiftSettings: strict),
    // libcurl's headers from the compiler's own search path, and no pkg-config: its `-L` of
    // the system library folder would come first on the link line and defeat the AS_NEEDED
    // libcurl of scripts/release-build (decision 0504).
    .systemLibrary(
      name: "CCurl", path: "Modules/Adapters/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    // Fixed-signature wrappers, and libcurl loaded with dlopen on first use (decision 0504).
    .target(
      name: "CCurlShim", dependencies: ["CCurl"], path: "Modules/Adapters/CCurlShim",
      linkerSettings: [.linkedLibrary("dl")]),
    .target(
      name: "CourierCurl",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CCurl", "CCurlShim", httpTypes,
      ],
      path: "Modules/Adapters/CurlTransport", swiftSettings: strict),
    .target(name: "CNetlink", path: "Modules/Adapters/CNetlink"),
    .target(
      name: "CourierNetlink",
      dependencies: ["CourierSystem", "CourierDomain", "CourierPorts", "CNetlink"],
      path: "Modules/Adapters/NetlinkPathMonitor", swiftSettings: strict),
    // libsystemd's sd-bus loaded with dlopen on first use (decision 2600), declared by hand as
    // CVipsShim does libvips: no headers, no libsystemd at start-up.
    .target(
      name: "CDBusShim", path: "Modules/Adapters/CDBusShim",
      linkerSettings: [.linkedLibrary("dl")]),
    // NetworkManager's and systemd-networkd's path facts over the system D-Bus; in no product:
    // the composition root merges them into the netlink monitor's paths (decision 2601).
    .target(
      name: "CourierDBus",
      dependencies: ["CourierSystem", "CourierDomain", "CourierPorts", "CDBusShim"],
      path: "Modules/Adapters/DBusPathFacts", swiftSettings: strict),
    .target(
      name: "CourierVips",
      dependencies: ["CourierSystem", "CourierDomain", "CourierPorts", "CVipsShim"],
      path: "Modules/Adapters/VipsImageCompressor", swiftSettings: strict),
    // libvips is loaded with dlopen on the first compression (Docs/decisions/0353): no
    // headers, include paths or unsafe link flags, and no libvips at start-up.
    .target(
      name: "CVipsShim", path: "Modules/Adapters/CVipsShim",
      linkerSettings: [.linkedLibrary("dl")]),
    // No pkg-config either, for the same reason as CCurl: the header is on the compiler's own
    // search path and the module map links sqlite3.
    .systemLibrary(
      name: "CSQLite", path: "Modules/Adapters/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    // libsqlite3 loaded with dlopen on first use (decision 1401), as CCurlShim does for libcurl.
    .target(
      name: "CSQLiteShim", dependencies: ["CSQLite"], path: "Modules/Adapters/CSQLiteShim",
      linkerSettings: [.linkedLibrary("dl")]),
    .target(
      name: "CourierSQLite",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CSQLite", "CSQLiteShim", httpTypes,
      ],
      path: "Modules/Adapters/SQLiteStore", swiftSettings: strict),
    .target(
      name: "CourierFileStore", dependencies: ["CourierDomain", "CourierPorts"],
      path: "Modules/Adapters/FileStore", swiftSettings: strict),
    // SHA-256 block compression with the x86 SHA extensions: one function with its own
    // `target("sha,sse4.1")` attribute, called only after a CPUID check (decision 1303), so
    // no compiler flag is needed; elsewhere it reports itself unavailable. In no product: the
    // composition root picks it (decision 2304).
    .target(name: "CSHANI", path: "Modules/Adapters/CSHANI"),
    // The opt-in detached remover of delivered queued uploads (decision 1303 §3): in C, so
    // that between fork and _exit only async-signal-safe calls run.
    .target(name: "CDetachedRemoval", path: "Modules/Adapters/CDetachedRemoval"),
    .target(
      name: "CourierSHANI", dependencies: ["CourierDomain", "CourierPorts", "CSHANI"],
      path: "Modules/Adapters/SHANIFileHasher", swiftSettings: strict),
    // In-memory adapters production may choose by config (`transport: memory`,
    // `store: memory`, the manual path monitor), with driving and inspection APIs.
    .target(
      name: "CourierMemory",
      dependencies: ["CourierSystem", "CourierDomain", "CourierPorts", httpTypes],
      path: "Modules/Adapters/Memory", swiftSettings: strict),
    // Fakes for users' tests (clocks, random sources, compressor); re-exports CourierMemory.
    .target(
      name: "CourierTestKit", dependencies: ["CourierDomain", "CourierPorts", "CourierMemory"],
      path: "Modules/Adapters/TestKit", swiftSettings: strict),

    // Generated OpenAPI clients over Courier's pipeline (decision 2204). The only target that
    // depends on OpenAPIRuntime, which imports Foundation proper: nothing else in Courier, and
    // neither app, may link it (decision 1414).
    .target(
      name: "CourierOpenAPI",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CourierCore", httpTypes,
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ],
      path: "Modules/OpenAPI", swiftSettings: strict),

    // The only place that knows every adapter.
    .target(
      name: "CourierLinux",
      dependencies: [
        "Courier", "CourierSystem", "CourierDomain", "CourierPorts", "CourierCore",
        .target(name: "CourierURLSession", condition: .when(traits: ["URLSessionTransport"])),
        "CourierCurl", "CourierNetlink", "CourierVips", "CourierSQLite", "CourierFileStore",
        "CourierMemory", "CourierSHANI", "CDetachedRemoval", "CourierDBus", httpTypes, logging,
        coreMetrics,
      ],
      path: "Modules/Composition", swiftSettings: strict),
    // The apps' one signal helper (a self-pipe and its reader thread); in no product.
    .target(
      name: "CourierSignals", dependencies: ["CourierSystem"], path: "Modules/Signals",
      swiftSettings: strict),
    .target(
      name: "CourierCLI",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CourierCore", "CourierLinux",
        "CourierSignals", "CourierSQLite",
        // The command line: commands, help, completion scripts, the man page's dump (2202).
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        // `--verbose` is a LogHandler; the command records no metrics (decision 2203).
        logging, coreMetrics,
      ],
      path: "Modules/CLI", swiftSettings: strict),
    .target(
      name: "CourierTUI",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CourierCore", "CourierLinux",
        "CourierSignals",
        .product(name: "ArgumentParser", package: "swift-argument-parser"), logging,
      ],
      path: "Modules/TUI", swiftSettings: strict),
    .executableTarget(
      name: "courier", dependencies: ["CourierCLI", "CourierSignals"], path: "Apps/courier",
      swiftSettings: strict),
    .executableTarget(
      name: "courier-tui",
      dependencies: ["CourierTUI", "CourierLinux", "CourierSignals", logging, coreMetrics],
      path: "Apps/courier-tui", swiftSettings: strict),

    // Benchmarks are a package of their own (Benchmarks/Package.swift), so a dependent never
    // builds or sees them; the probes that drive package-level pieces are below, under Tests/.

    // Test helpers shared by test targets: the reference backend launcher, misbehaving servers.
    .target(
      name: "CourierTestSupport",
      dependencies: [
        "CourierSystem", "CourierDomain", "CourierPorts", "CourierCore", "CourierTestKit",
        httpTypes, logging, inMemoryLogging,
      ],
      path: "Tests/Support",
      exclude: ["CLI", "tls-server.py", "cutting-proxy.py", "nm_mock.py", "portal-server.py"],
      swiftSettings: strict),
    // The CLI's integration suites' one set-up: the in-process runner, its captured output and
    // `CLIFixture` (a logged-in data folder, the built binary's environment, the server reads).
    .target(
      name: "CourierCLITestSupport",
      dependencies: ["CourierSystem", "CourierCLI", "CourierDomain", "CourierTestSupport"],
      path: "Tests/Support/CLI", swiftSettings: strict),
    .testTarget(
      name: "CourierSystemTests", dependencies: ["CourierSystem", "CourierTestSupport"],
      path: "Tests/SystemTests",
      swiftSettings: strict),
    .testTarget(
      name: "CourierDomainTests",
      dependencies: ["CourierSystem", "CourierDomain", "CourierTestSupport", httpTypes],
      path: "Tests/DomainTests",
      swiftSettings: strict),
    .testTarget(
      name: "CourierCoreTests",
      dependencies: [
        "CourierSystem", "CourierCore", "CourierTestKit", "CourierTestSupport", httpTypes,
        logging, inMemoryLogging, coreMetrics, metricsTestKit,
      ],
      path: "Tests/CoreTests", swiftSettings: strict),
    // The ports' own values (a request body's segments read back).
    .testTarget(
      name: "CourierPortsTests", dependencies: ["CourierPorts", "CourierDomain"],
      path: "Tests/PortsTests", swiftSettings: strict),
    // The in-memory adapters users script their tests with.
    .testTarget(
      name: "CourierMemoryTests",
      dependencies: [
        "CourierTestKit", "CourierTestSupport", "CourierDomain", "CourierPorts", httpTypes,
      ],
      path: "Tests/MemoryTests", swiftSettings: strict),
    .testTarget(
      name: "CourierURLSessionTests",
      dependencies: [
        "CourierURLSession", "CourierCore", "CourierTestKit", "CourierTestSupport", httpTypes,
      ],
      path: "Tests/URLSessionTests", swiftSettings: strict),
    .testTarget(
      name: "CourierCurlTests",
      dependencies: [
        "CourierSystem", "CourierCurl", "CCurl", "CourierCore", "CourierLinux",
        "CourierTestKit", "CourierTestSupport", httpTypes,
      ],
      path: "Tests/CurlTests", swiftSettings: strict),
    .testTarget(
      name: "CourierNetlinkTests",
      dependencies: ["CourierNetlink", "CNetlink", "CourierCore", "CourierTestSupport"],
      path: "Tests/NetlinkTests", swiftSettings: strict),
    .testTarget(
      name: "CourierSHANITests",
      dependencies: [
        "CourierSystem", "CourierSHANI", "CourierPorts", "CourierDomain", "CourierTestSupport",
      ],
      path: "Tests/SHANITests", swiftSettings: strict),
    .testTarget(
      name: "CourierVipsTests", dependencies: ["CourierVips", "CourierPorts", "CourierDomain"],
      path: "Tests/VipsTests",
      swiftSettings: strict),
    // Drives a local store from another process: killed mid-write by the crash test, timed by
    // Benchmarks/stores.
    .executableTarget(
      name: "courier-store-crash-probe",
      dependencies: [
        "CourierDomain", "CourierPorts", "CourierSQLite", "CourierFileStore", "CSQLiteShim",
        httpTypes,
      ],
      path: "Tests/StoreCrashProbe", swiftSettings: strict),
    // Drives one transport from its own process, so a test measures its memory alone.
    .executableTarget(
      name: "courier-transport-probe",
      dependencies: [
        "CourierCurl", "CourierURLSession", "CourierDomain", "CourierPorts", httpTypes,
      ],
      path: "Tests/TransportProbe", swiftSettings: strict),
    // Measurement tools the benchmarks run (Benchmarks/netlink, fleet, sync, upload-bench.sh):
    // here rather than in Benchmarks/Package.swift because each drives something Courier
    // keeps package-level (decision 2304), as the probes above do.
    .executableTarget(
      name: "courier-netlink-probe", dependencies: ["CourierNetlink", "CourierDomain"],
      path: "Tests/NetlinkProbe", swiftSettings: strict),
    .executableTarget(
      name: "fleet-sim", dependencies: ["CourierDomain"], path: "Tests/FleetSimulation",
      swiftSettings: strict),
    .executableTarget(
      name: "multipart-bench", dependencies: ["CourierCore", "CourierDomain"],
      path: "Tests/MultipartProbe", swiftSettings: strict),
    // A large list refresh's JSON: parse, the store's writer, read back and compare
    // (Benchmarks/json/run.sh).
    .executableTarget(
      name: "json-bench", dependencies: ["CourierDomain"], path: "Tests/JSONBench",
      swiftSettings: strict),
    // The response cache's costs: a hit, a 304, a plain GET (Benchmarks/cache/run.sh).
    .executableTarget(
      name: "cache-bench",
      dependencies: ["CourierLinux", "CourierCore", "CourierDomain", httpTypes],
      path: "Tests/CacheBench", swiftSettings: strict),
    .executableTarget(
      name: "sync-bench-enqueue",
      dependencies: ["CourierLinux", "CourierSQLite", "CourierCore", "CourierDomain"],
      path: "Tests/SyncEnqueueProbe", swiftSettings: strict),
    .testTarget(
      name: "CourierStoreTests",
      dependencies: [
        "CourierSystem", "CourierSQLite", "CourierFileStore", "CourierTestKit", "CourierCore",
        "CourierTestSupport", httpTypes,
      ],
      path: "Tests/StoreTests", swiftSettings: strict),
    .testTarget(
      name: "CourierCLITests",
      dependencies: [
        "CourierSystem", "CourierCLI", "CourierCLITestSupport", "CourierCore", "CourierLinux",
        "CourierTestKit", "CourierTestSupport", "CourierSQLite", "CourierCurl",
        .product(name: "ArgumentParser", package: "swift-argument-parser"), httpTypes, logging,
        inMemoryLogging, coreMetrics, metricsTestKit,
      ],
      path: "Tests/CLITests", swiftSettings: strict),
    // The composition root (the CourierLinux product): config layers, the session and its
    // doors, private files, the queued-upload store.
    .testTarget(
      name: "CourierLinuxTests",
      dependencies: [
        "CourierSystem", "CourierLinux", "CourierCore", "CourierDomain", "CourierTestKit",
        "CourierTestSupport", httpTypes, logging, inMemoryLogging, coreMetrics, metricsTestKit,
      ],
      path: "Tests/CompositionTests", swiftSettings: strict),
    .testTarget(
      name: "CourierOpenAPITests",
      dependencies: [
        "CourierSystem", "CourierOpenAPI", "CourierCore", "CourierLinux", "CourierTestKit",
        "CourierTestSupport",
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), httpTypes,
      ],
      path: "Tests/OpenAPITests", swiftSettings: strict),
    .testTarget(
      name: "CourierTUITests",
      dependencies: [
        "CourierTUI", "CourierCore", "CourierLinux", "CourierTestKit", "CourierTestSupport",
        .product(name: "ArgumentParser", package: "swift-argument-parser"), httpTypes,
      ],
      path: "Tests/TUITests", swiftSettings: strict),
  ]
)
