import CourierDomain
import Foundation
import Testing

@Suite("MultipartBoundary")
struct MultipartBoundaryTests {
  @Test(
    "RFC 2046 limits",
    arguments: [
      ("a", true), (String(repeating: "b", count: 70), true),
      (String(repeating: "b", count: 71), false), ("", false), ("ends with space ", false),
      ("'()+_,-./:=? x", true), ("semi;colon", false), ("quote\"", false), ("CR\r", false),
      ("nul\0", false), ("ünicode", false), ("----WebKitFormBoundary7MA4YWxkTrZu0gW", true),
    ])
  func validation(candidate: String, valid: Bool) {
    #expect((MultipartBoundary.problem(with: candidate) == nil) == valid)
    #expect(((try? MultipartBoundary(candidate)) != nil) == valid)
  }

  @Test("an invalid boundary's error says why")
  func error() throws {
    let error = try #require(throws: CourierError.self) {
      try MultipartBoundary(String(repeating: "x", count: 71))
    }
    #expect(error.code == "multipart_invalid_boundary")
    #expect(error.userMessage.contains("more than 70"))
  }

  @Test("random boundaries carry 128 bits, pass validation and do not repeat")
  func random() throws {
    var seen = Set<String>()
    for _ in 0..<1000 {
      let boundary = MultipartBoundary.random()
      #expect(MultipartBoundary.problem(with: boundary.value) == nil)
      #expect(!boundary.needsQuoting)
      let hex = boundary.value.dropFirst(MultipartBoundary.generatedPrefix.count)
      #expect(hex.count == 32)
      #expect(hex.allSatisfy { $0.isHexDigit })
      seen.insert(boundary.value)
    }
    #expect(seen.count == 1000)
  }

  @Test("a seeded generator gives a reproducible boundary")
  func seeded() {
    struct Counter: RandomNumberGenerator {
      var state: UInt64 = 0
      mutating func next() -> UInt64 {
        state += 1
        return state &* 0x0123_4567_89AB_CDEF
      }
    }
    var first = Counter()
    var second = Counter()
    let one = MultipartBoundary.random(using: &first)
    #expect(one == MultipartBoundary.random(using: &second))
    #expect(one.value == "CourierFormBoundary0123456789abcdef02468acf13579bde")
  }
}
