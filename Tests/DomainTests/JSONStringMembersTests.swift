import CourierDomain
import CourierSystem
import Foundation
import Testing

@Suite("JSONStringMembers")
struct JSONStringMembersTests {
  static func read(_ text: String, _ names: [String] = ["title", "body"]) throws -> [String?] {
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBytes {
      try JSONStringMembers(names).read(UnsafeRawBufferPointer($0))
    }
  }

  @Test(
    "the members asked for, as strings; nil when missing or not a string",
    arguments: [
      (#"{"title":"T","body":"B"}"#, ["T", "B"]),
      (#"{"body":"B","title":"T","x":[1,{"y":null}]}"#, ["T", "B"]),
      (#" { "title" : "T" } "#, ["T", nil]),
      (#"{"title":1,"body":null}"#, [nil, nil]),
      (#"{"title":{"title":"inner"},"body":"B"}"#, [nil, "B"]),
      (#"{"title":"first","title":"second"}"#, ["first", nil]),
      (#"{"title":2,"title":"second"}"#, [nil, nil]),
      (#"{"ti\u0074le":"escaped name","body":"\u00e9\n\"q\""}"#, ["escaped name", "é\n\"q\""]),
      (#"{"títle":"x","title":"é😀"}"#, ["é😀", nil]),
      (#"{}"#, [nil, nil]),
      (#"["title","body"]"#, [nil, nil]),
      (#""title""#, [nil, nil]),
    ] as [(String, [String?])])
  func members(text: String, expected: [String?]) throws {
    #expect(try Self.read(text) == expected)
  }

  @Test(
    "refuses what JSONValue(parsing:) refuses",
    arguments: [
      #"{"title":"T""#, #"{"title":"T",}"#, #"{"title" "T"}"#, #"{"title":"T"} x"#,
      "{\"title\":\"a\u{01}b\"}", #"{"title":"\x"}"#, #"{"title":"\ud800"}"#, #"{"title":1e}"#,
      #"{title:"T"}"#, "", "{\"\u{01}\":1}",
    ])
  func refuses(text: String) {
    #expect(throws: JSONSyntaxError.self) { try Self.read(text) }
    #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: text) }
  }

  @Test("bytes that are not UTF-8 are refused in a value and in a name")
  func invalidUTF8() {
    for bytes in [
      Array(#"{"title":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8),
      Array(#"{""#.utf8) + [0xFF] + Array(#"":"x"}"#.utf8),
    ] {
      #expect(throws: JSONSyntaxError.self) {
        try bytes.withUnsafeBytes { try JSONStringMembers(["title"]).read($0) }
      }
      #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Data(bytes)) }
    }
  }

  @Test("every truncation and every single-byte change: the same verdict as a whole parse")
  func agreesWithAWholeParse() throws {
    let seed = Array(
      #"{"title":"Café \"T\"","n":-1.5e3,"a":[true,false,null,{"body":"x"}],"body":"B\u00e9","z":{}}"#
        .utf8)
    var texts: [[UInt8]] = (0...seed.count).map { Array(seed.prefix($0)) }
    for index in seed.indices {
      for replacement: UInt8 in [0x22, 0x5C, 0x7B, 0x7D, 0x2C, 0x3A, 0x20, 0x31, 0x00, 0xFF] {
        var text = seed
        text[index] = replacement
        texts.append(text)
      }
    }
    var accepted = 0
    for text in texts {
      let whole = try? JSONValue(parsing: Data(text))
      let members = try? text.withUnsafeBytes { try JSONStringMembers(["title", "body"]).read($0) }
      #expect((whole == nil) == (members == nil), "\(String(decoding: text, as: UTF8.self))")
      if let whole, let members {
        accepted += 1
        #expect(members == [whole["title"]?.stringValue, whole["body"]?.stringValue])
      }
    }
    #expect(accepted > 10)
  }
}
