// swift-tools-version:6.1
// Courier's benchmarks and probes: a package of its own on top of Courier's products, so a
// package that depends on Courier never builds or sees them. Scripts build it with
// `swift build --package-path Benchmarks --scratch-path Benchmarks/.build …`.
import PackageDescription

let strict: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
  name: "CourierBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    // The Courier package in the folder above, named so that product references below do not
    // depend on what that folder (a checkout, a worktree) is called.
    .package(name: "Courier", path: ".."),
    // For the generated client of openapi/ (the build plugin) and its runtime.
    // Without FullFoundation, as Courier declares it (decision 2204).
    .package(
      url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.11.0", traits: []),
    .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.13.0"),
  ],
  targets: [
    // Compression against vipsthumbnail and ImageMagick (compression/run.sh).
    .executableTarget(
      name: "courier-compress-bench",
      dependencies: [
        .product(name: "Courier", package: "Courier"),
        .product(name: "CourierVips", package: "Courier"),
      ],
      path: "compression/courier-compress-bench", swiftSettings: strict),
    // Probe for the netlink path monitor (netlink/run.sh).
    .executableTarget(
      name: "courier-netlink-probe",
      dependencies: [
        .product(name: "Courier", package: "Courier"),
        .product(name: "CourierNetlink", package: "Courier"),
      ],
      path: "netlink/Probe", swiftSettings: strict),
    // Uploads and small requests through each transport against curl (transport/run.sh).
    .executableTarget(
      name: "courier-transport-bench",
      dependencies: [
        .product(name: "Courier", package: "Courier"),
        .product(name: "CourierCurl", package: "Courier"),
        .product(name: "CourierURLSession", package: "Courier"),
      ],
      path: "transport/Sources", swiftSettings: strict),
    // Queues N article creations offline (sync/run.sh, fleet/run.sh).
    .executableTarget(
      name: "sync-bench-enqueue",
      dependencies: [
        .product(name: "CourierLinux", package: "Courier"),
        .product(name: "CourierSQLite", package: "Courier"),
      ],
      path: "sync/Enqueue", swiftSettings: strict),
    // A fleet of clients against a server of fixed capacity on a virtual clock, with the real
    // RetryPolicy, RetryBudget and ReplayBackoff (fleet/run.sh, Docs/benchmarks/fleet.md).
    .executableTarget(
      name: "fleet-sim", dependencies: [.product(name: "Courier", package: "Courier")],
      path: "fleet/Simulation", swiftSettings: strict),
    // GET /articles/{id} through a client generated from Backend/openapi.json over
    // CourierOpenAPI, against the same calls through APIClient (openapi/run.sh).
    .executableTarget(
      name: "courier-openapi-bench",
      dependencies: [
        .product(name: "CourierLinux", package: "Courier"),
        .product(name: "CourierOpenAPI", package: "Courier"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ],
      path: "openapi/Sources", swiftSettings: strict,
      plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]),
    // Multipart body writing and the in-memory/temp-file threshold (upload-bench.sh).
    .executableTarget(
      name: "multipart-bench", dependencies: [.product(name: "Courier", package: "Courier")],
      path: "MultipartBench", swiftSettings: strict),
  ]
)
