// swift-tools-version:6.0
// A program that talks to the reference backend through a client generated from its OpenAPI
// document (swift-openapi-generator's build plugin), sending through Courier's pipeline with
// CourierOpenAPI. It depends on Courier by version as any package would; scripts/examples
// builds it against a tagged clone and runs it against a backend it starts.
import PackageDescription

// Where Courier's git repository lives; scripts/examples points this at a tagged clone.
let courierURL = "https://git.example.com/courier.git"

let package = Package(
  name: "OpenAPIClient",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: courierURL, from: "0.1.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.14.0"),
    .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.11.0"),
    .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.13.0"),
  ],
  targets: [
    // Sources/openapi-client/openapi.json is a copy of Courier's Backend/openapi.json
    // (scripts/examples fails when the two differ); the plugin generates the client from it at
    // each build.
    .executableTarget(
      name: "openapi-client",
      dependencies: [
        .product(name: "CourierLinux", package: "courier"),
        .product(name: "CourierOpenAPI", package: "courier"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ],
      plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")])
  ]
)
