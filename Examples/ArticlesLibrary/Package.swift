// swift-tools-version:6.0
// A small library on Courier's portable core, with tests that use only CourierTestKit's fakes and
// a manual clock. It depends on Courier by version as any package would; scripts/examples
// builds and tests it against a tagged clone.
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
    .package(url: courierURL, from: "0.1.0")
  ],
  targets: [
    .target(
      name: "ArticlesLibrary", dependencies: [.product(name: "Courier", package: "courier")]),
    .testTarget(
      name: "ArticlesLibraryTests",
      dependencies: [
        "ArticlesLibrary", .product(name: "Courier", package: "courier"),
        .product(name: "CourierTestKit", package: "courier"),
      ]),
  ]
)
