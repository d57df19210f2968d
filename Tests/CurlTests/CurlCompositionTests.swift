import CourierCurl
import CourierLinux
import Foundation
import Testing

@Suite("The composition root offers the curl transport")
struct CurlCompositionTests {
  @Test("transport \"curl\" from the environment builds a CurlTransport under the decorators")
  func chosenByName() throws {
    let config = try ConfigLoader.load(
      flags: [:], environment: ["HOME": "/nonexistent", "COURIER_TRANSPORT": "curl"],
      readFile: { _ in nil })
    #expect(config.transport == .curl)
    let environment = try CourierEnvironment(config: config)
    #expect(environment.baseTransport is CurlTransport)
  }

  @Test("an unknown transport name lists curl among the known ones")
  func listedAsKnown() {
    #expect(throws: ConfigError.self) {
      _ = try ConfigLoader.load(
        flags: ["transport": "carrier-pigeon"], environment: ["HOME": "/nonexistent"],
        readFile: { _ in nil })
    }
    do {
      _ = try ConfigLoader.load(
        flags: ["transport": "carrier-pigeon"], environment: ["HOME": "/nonexistent"],
        readFile: { _ in nil })
    } catch {
      #expect(String(describing: error).contains("curl"))
    }
  }
}
