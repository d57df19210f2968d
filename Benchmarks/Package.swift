// swift-tools-version:6.1
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
    // Uploads and small requests through each transport against curl (transport/run.sh).
    .executableTarget(
      name: "courier-transport-bench",
      dependencies: [
        .product(name: "Courier", package: "Courier"),
        .product(name: "CourierCurl", package: "Courier"),
        .product(name: "CourierURLSession", package: "Courier"),
      ],
      path: "transport/Sources", swiftSettings: strict),
    // GET /articles/{id} through a client generated from Backend/openapi.json over
    // CourierOpenAPI, against the same calls through APIClient (openapi/run.sh).
    .executableTarget(
      name: "courier-openapi-bench",
      dependencies: [
        .product(name: "CourierLinux", package: "Courier"),
        .product(name: "CourierMemory", package: "Courier"),
        .product(name: "CourierOpenAPI", package: "Courier"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ],
      path: "openapi/Sources", swiftSettings: strict,
      plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]),
  ]
)
