import Testing

@testable import CourierTUI

@Suite("InputDecoder")
struct InputDecoderTests {
  static func decode(_ bytes: [UInt8]) -> [InputEvent] {
    var decoder = InputDecoder()
    return decoder.feed(bytes) + decoder.flush()
  }

  static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  @Test(
    "escape sequences, control keys and text decode to keys",
    arguments: [
      ("\u{1B}[A", [Key.up]),
      ("\u{1B}[B", [.down]),
      ("\u{1B}[C", [.right]),
      ("\u{1B}[D", [.left]),
      ("\u{1B}[H", [.home]),
      ("\u{1B}[F", [.end]),
      ("\u{1B}[1~", [.home]),
      ("\u{1B}[7~", [.home]),
      ("\u{1B}[4~", [.end]),
      ("\u{1B}[8~", [.end]),
      ("\u{1B}[3~", [.delete]),
      ("\u{1B}[2~", [.insert]),
      ("\u{1B}[5~", [.pageUp]),
      ("\u{1B}[6~", [.pageDown]),
      ("\u{1B}[1;5C", [.right]),  // Ctrl-Right: the modifier is ignored
      ("\u{1B}[Z", [.backTab]),
      ("\u{1B}[15~", [.function(5)]),
      ("\u{1B}OA", [.up]),  // SS3 forms (application cursor mode)
      ("\u{1B}OB", [.down]),
      ("\u{1B}OC", [.right]),
      ("\u{1B}OD", [.left]),
      ("\u{1B}OH", [.home]),
      ("\u{1B}OF", [.end]),
      ("\u{1B}OP", [.function(1)]),
      ("\u{1B}", [.escape]),  // bare Escape, once input goes quiet
      ("\u{1B}\u{1B}[A", [.escape, .up]),
      ("\u{1B}x", [.alt("x")]),
      ("\u{03}", [.control("c")]),  // Ctrl-C arrives as a byte in raw mode
      ("\u{01}\u{05}\u{0B}\u{15}", [.control("a"), .control("e"), .control("k"), .control("u")]),
      ("\r", [.enter]),
      ("\n", [.enter]),
      ("\t", [.tab]),
      ("\u{7F}", [.backspace]),
      ("\u{08}", [.backspace]),
      ("q", [.character("q")]),
      ("é日🎉", [.character("é"), .character("日"), .character("🎉")]),
      ("\u{1B}[<0;10;5M", []),  // SGR mouse report: ignored
      ("\u{1B}[99x", []),  // unknown CSI: ignored
    ])
  func decodesKeys(input: String, expected: [Key]) {
    #expect(Self.decode(Self.bytes(input)) == expected.map { .key($0) })
  }

  @Test("an in-band resize report becomes a resize event")
  func resizeReport() {
    #expect(
      Self.decode(Self.bytes("\u{1B}[48;30;100;600;1000t"))
        == [.resize(TerminalSize(rows: 30, columns: 100))])
  }

  @Test("every split of a byte stream between reads gives the same events")
  func splitAnywhere() {
    let stream = Self.bytes("a\u{1B}[A日\u{1B}[3~🎉\u{1B}OHé\u{03}\u{1B}[6~z")
    let whole = Self.decode(stream)
    #expect(whole.count == 10)
    for cut in 1..<stream.count {
      var decoder = InputDecoder()
      let events = decoder.feed(stream[..<cut]) + decoder.feed(stream[cut...])
      #expect(events == whole, "split at \(cut)")
    }
  }

  @Test("a UTF-8 character split across reads waits for its last byte, even after idle")
  func utf8Split() {
    var decoder = InputDecoder()
    let emoji = Self.bytes("🎉")
    #expect(decoder.feed(emoji.prefix(1)).isEmpty)
    #expect(decoder.flush().isEmpty)
    #expect(decoder.feed(emoji[1..<3]).isEmpty)
    #expect(decoder.feed(emoji[3...]) == [.key(.character("🎉"))])
    #expect(!decoder.hasPending)
  }

  @Test("a lone Escape waits for the flush; an Escape followed by a sequence is that key")
  func escapeTiming() {
    var decoder = InputDecoder()
    #expect(decoder.feed([0x1B]).isEmpty)
    #expect(decoder.hasPending)
    #expect(decoder.feed(Self.bytes("[B")) == [.key(.down)])
    #expect(decoder.feed([0x1B]).isEmpty)
    #expect(decoder.flush() == [.key(.escape)])
    #expect(decoder.feed([0x1B, UInt8(ascii: "[")]).isEmpty)
    #expect(decoder.flush() == [.key(.escape), .key(.character("["))])
  }

  @Test(
    "invalid UTF-8 becomes U+FFFD and decoding goes on",
    arguments: [
      [UInt8]([0xFF, 0x61]),
      [0xC0, 0x61],  // overlong lead byte
      [0xE0, 0x80, 0x61],  // overlong form
      [0xED, 0xA0, 0x61],  // surrogate
      [0xC3, 0x61],  // missing continuation
    ])
  func invalidUTF8(bytes: [UInt8]) {
    let events = Self.decode(bytes)
    #expect(events.first == .key(.character("\u{FFFD}")))
    #expect(events.last == .key(.character("a")))
  }

  @Test("an endless escape sequence is dropped, not buffered forever")
  func endlessSequence() {
    var decoder = InputDecoder()
    _ = decoder.feed([0x1B, UInt8(ascii: "[")] + Array(repeating: UInt8(ascii: "1"), count: 100))
    #expect(!decoder.hasPending)
    #expect(decoder.feed(Self.bytes("x")) == [.key(.character("x"))])
  }
}
