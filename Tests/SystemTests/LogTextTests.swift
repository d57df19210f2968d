import CourierSystem
import Testing

/// `LogText.escaped`, the one function Courier prints untrusted text with (decision 2420): nothing a
/// terminal acts on survives it, anything else passes unchanged, and escaping again changes
/// nothing.
@Suite("LogText")
struct LogTextTests {
  @Test(
    "each terminal control becomes a visible escape",
    arguments: [
      ("a\u{1B}[2Jb", #"a\e[2Jb"#), ("\u{1B}]0;owned\u{07}", #"\e]0;owned\x07"#),
      ("safe\rforged", #"safe\rforged"#), ("one\ntwo\tthree", #"one\ntwo\tthree"#),
      ("abc\u{202E}gnp.exe", #"abc\u{202E}gnp.exe"#), ("\u{9B}31m", #"\x9B31m"#),
      ("\u{7F}\u{0}", #"\x7F\x00"#), ("\u{2066}x\u{2069}", #"\u{2066}x\u{2069}"#),
      ("l\u{2028}p\u{2029}", #"l\u{2028}p\u{2029}"#), ("\u{200F}\u{061C}", #"\u{200F}\u{061C}"#),
    ])
  func escapes(_ text: String, _ shown: String) {
    #expect(LogText.escaped(text) == shown)
  }

  @Test("text a terminal cannot act on passes unchanged: accents, CJK, emoji, ZWJ, backslashes")
  func plain() {
    for text in ["café", "日本語", "👩‍💻", "a\\nb", #"C:\dir"#, "\u{200B}x", ""] {
      #expect(LogText.escaped(text) == text)
    }
  }

  @Test("every scalar: no control survives, nothing else changes, escaping again is a no-op")
  func everyScalar() {
    // Every scalar of the BMP and of the planes' first blocks, each alone and between letters.
    let ranges: [ClosedRange<UInt32>] = [0...0xD7FF, 0xE000...0x1_0FFF, 0xE_0000...0xE_01EF]
    for range in ranges {
      for value in range {
        guard let scalar = Unicode.Scalar(value) else { continue }
        let text = "a" + String(Character(scalar)) + "b"
        let escaped = LogText.escaped(text)
        if LogText.needsEscape(scalar) {
          #expect(!escaped.unicodeScalars.contains(where: LogText.needsEscape), "U+\(value)")
          #expect(escaped.unicodeScalars.allSatisfy { $0.isASCII }, "U+\(value)")
        } else {
          #expect(escaped == text, "U+\(value)")
        }
        #expect(LogText.escaped(escaped) == escaped, "U+\(value)")
      }
    }
  }

  @Test("a body's own line breaks and tabs can be kept; a CR never is")
  func keepingLineBreaks() {
    #expect(
      LogText.escaped("one\n\ttwo\r\n\u{1B}[31m", keepingLineBreaks: true)
        == "one\n\ttwo\\r\n\\e[31m")
    #expect(LogText.escaped("one\ntwo", keepingLineBreaks: false) == #"one\ntwo"#)
  }
}
