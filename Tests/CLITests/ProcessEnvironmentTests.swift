import Foundation
import Testing

@testable import CourierCLI

/// The environment read from `environ`: what `getenv` would answer for each name.
@Suite("ProcessEnvironment")
struct ProcessEnvironmentTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let entries: [String]
    let expected: [String: String]
    let testDescription: String
  }

  static let rows: [Row] = [
    Row(entries: [], expected: [:], testDescription: "empty"),
    Row(
      entries: ["HOME=/root", "TERM=dumb"], expected: ["HOME": "/root", "TERM": "dumb"],
      testDescription: "plain entries"),
    Row(
      entries: ["A=first", "B=x", "A=second", "A=third"], expected: ["A": "first", "B": "x"],
      testDescription: "the first of the same name wins"),
    Row(
      entries: ["NOEQUALS", "A=1", "ALSO_NOTHING"], expected: ["A": "1"],
      testDescription: "an entry without = is skipped"),
    Row(
      entries: ["EMPTY=", "EQ=a=b=c", "=nameless"],
      expected: ["EMPTY": "", "EQ": "a=b=c", "": "nameless"],
      testDescription: "empty value, = in the value, empty name"),
    Row(
      entries: ["NAME=café ☕", "ÉTÉ=oui"], expected: ["NAME": "café ☕", "ÉTÉ": "oui"],
      testDescription: "UTF-8"),
    Row(
      entries: (0..<300).map { "V\($0 % 100)=\($0)" },
      expected: Dictionary(uniqueKeysWithValues: (0..<100).map { ("V\($0)", "\($0)") }),
      testDescription: "300 entries, 100 names"),
  ]

  @Test(arguments: rows)
  func readsLikeGetenv(_ row: Row) {
    let pointers = row.entries.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    let result = pointers.withUnsafeBufferPointer {
      ProcessEnvironment.dictionary($0.baseAddress!)
    }
    #expect(result == row.expected)
  }

  @Test func currentMatchesGetenv() throws {
    let environment = ProcessEnvironment.current()
    #expect(!environment.isEmpty)
    for (name, value) in environment where !name.isEmpty {
      #expect(getenv(name).map { String(cString: $0) } == value, "\(name)")
    }
  }
}
