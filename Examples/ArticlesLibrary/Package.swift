// swift-tools-version:6.0
// A small library on Courier's portable core that takes a swift-log Logger, with tests that use
// only CourierTestKit's fakes, a manual clock, and swift-log's and swift-metrics' own test
// kits. It depends on Courier by version as any package would; scripts/examples builds and
// tests it against a tagged clone.
import PackageDescription

// Where Courier's git repository lives; scripts/examples points this at a tagged clone.
let courierURL = "https://git.example.com/courier.git"

let package = Package(
  name: "ArticlesLibrary",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "ArticlesLibrary", targets: ["ArticlesLibrary"])
  ],
  dependencies: [
    .package(url: courierURL, from: "0.1.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.14.0"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.10.1"),
  ],
  targets: [
    .target(
      name: "ArticlesLibrary",
      dependencies: [
        .product(name: "Courier", package: "courier"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(
      name: "ArticlesLibraryTests",
      dependencies: [
        "ArticlesLibrary", .product(name: "Courier", package: "courier"),
        .product(name: "CourierTestKit", package: "courier"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "InMemoryLogging", package: "swift-log"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
      ]),
  ]
)
