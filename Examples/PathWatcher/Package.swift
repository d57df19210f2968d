// swift-tools-version:6.0
// A command-line program on Courier's batteries-included Linux product, depending on Courier by
// version as any package would. scripts/examples builds it against a tagged clone.
import PackageDescription

// Where Courier's git repository lives; scripts/examples points this at a tagged clone.
let courierURL = "https://git.example.com/courier.git"

let package = Package(
  name: "PathWatcher",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: courierURL, from: "0.1.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.14.0"),
  ],
  targets: [
    .executableTarget(
      name: "path-watcher",
      dependencies: [
        .product(name: "CourierLinux", package: "courier"),
        .product(name: "Logging", package: "swift-log"),
      ])
  ]
)
