// swift-tools-version:6.0
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
    .package(name: "Courier", path: "..")
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
    // Multipart body writing and the in-memory/temp-file threshold (upload-bench.sh).
    .executableTarget(
      name: "multipart-bench", dependencies: [.product(name: "Courier", package: "Courier")],
      path: "MultipartBench", swiftSettings: strict),
  ]
)
