// swift-tools-version:6.0
// Courier's benchmarks: a package of its own on top of Courier's products, so a package that
// depends on Courier never builds or sees them, and built only from what those products make
// public. Scripts build it with `swift build --package-path Benchmarks --scratch-path
// Benchmarks/.build …`. The probes that drive package-level pieces (the netlink monitor's
// statistics, the multipart writer, the fleet simulation's decisions, the offline enqueue) are
// executables of the Courier package itself, under Tests/ (decision 2304).
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
    // Uploads and small requests through each transport against curl (transport/run.sh).
    .executableTarget(
      name: "courier-transport-bench",
      dependencies: [
        .product(name: "Courier", package: "Courier"),
        .product(name: "CourierCurl", package: "Courier"),
        .product(name: "CourierURLSession", package: "Courier"),
      ],
      path: "transport/Sources", swiftSettings: strict),
  ]
)
