import CourierTestSupport
import Foundation
import Testing

/// Examples/OpenAPIClient generates its client from a copy of the reference backend's document
/// (the generator plugin reads the target's own folder): the copy must be the document.
@Suite("The example's OpenAPI document")
struct OpenAPIExampleDocumentTests {
  @Test("Examples/OpenAPIClient's openapi.json is Backend/openapi.json, byte for byte")
  func copyIsCurrent() throws {
    let root = ReferenceBackend.repositoryRoot
    let served = try Data(contentsOf: root.appendingPathComponent("Backend/openapi.json"))
    let copy = try Data(
      contentsOf: root.appendingPathComponent(
        "Examples/OpenAPIClient/Sources/openapi-client/openapi.json"))
    #expect(
      copy == served,
      "cp Backend/openapi.json Examples/OpenAPIClient/Sources/openapi-client/openapi.json")
  }
}
