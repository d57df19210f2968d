/// Turns the bytes read from a terminal in raw mode into events, one chunk at a time, whatever
/// way the bytes were split between reads. Pure: no I/O, no clock; the caller decides when a
/// lone Escape has waited long enough and calls `flush()`.
package struct InputDecoder: Sendable, Hashable {
  private var pending: [UInt8] = []
  /// A sequence longer than this is garbage (or an attack): dropped rather than buffered.
  private static let maximumSequenceLength = 64

  /// Creates a decoder with nothing pending.
  package init() {}

  /// Whether bytes are waiting for the rest of a sequence (an Escape, a CSI, a UTF-8 character).
  package var hasPending: Bool { !pending.isEmpty }

  /// Decodes a chunk of bytes.
  /// - Parameter bytes: the bytes just read.
  /// - Returns: the complete events; an incomplete tail waits for the next chunk.
  package mutating func feed(_ bytes: some Sequence<UInt8>) -> [InputEvent] {
    pending.append(contentsOf: bytes)
    var events: [InputEvent] = []
    var index = 0
    while index < pending.count {
      switch decodeOne(at: index) {
      case .event(let event, let length):
        if let event { events.append(event) }
        index += length
      case .incomplete:
        pending.removeFirst(index)
        return events
      }
    }
    pending.removeAll(keepingCapacity: true)
    return events
  }

  /// Resolves what is pending after input went quiet: a lone Escape is the Escape key; an
  /// Escape followed by an unfinished sequence is Escape and then the characters typed.
  /// An unfinished UTF-8 character keeps waiting.
  /// - Returns: the events.
  package mutating func flush() -> [InputEvent] {
    guard pending.first == 0x1B else { return [] }
    let rest = pending.dropFirst()
    pending.removeAll()
    var events: [InputEvent] = [.key(.escape)]
    events += feed(rest)
    return events
  }

  private enum Step {
    case event(InputEvent?, length: Int)
    case incomplete
  }

  private func decodeOne(at index: Int) -> Step {
    let byte = pending[index]
    switch byte {
    case 0x1B: return decodeEscape(at: index)
    case 0x0D, 0x0A: return .event(.key(.enter), length: 1)
    case 0x09: return .event(.key(.tab), length: 1)
    case 0x7F, 0x08: return .event(.key(.backspace), length: 1)
    case 0x00: return .event(nil, length: 1)
    case 0x01...0x1A:
      let letter = Character(Unicode.Scalar(byte + 0x60))
      return .event(.key(.control(letter)), length: 1)
    case 0x1C...0x1F: return .event(nil, length: 1)
    default: return decodeUTF8(at: index)
    }
  }

  private func decodeEscape(at index: Int) -> Step {
    let available = pending.count - index
    guard available >= 2 else { return .incomplete }
    let next = pending[index + 1]
    switch next {
    case UInt8(ascii: "["):
      return decodeCSI(at: index)
    case UInt8(ascii: "O"):
      guard available >= 3 else { return .incomplete }
      return .event(ss3(pending[index + 2]).map { .key($0) }, length: 3)
    case 0x20..<0x7F:
      return .event(.key(.alt(Character(Unicode.Scalar(next)))), length: 2)
    default:
      // Escape then another control or non-ASCII byte: Escape, and the rest on its own.
      return .event(.key(.escape), length: 1)
    }
  }

  private func decodeCSI(at index: Int) -> Step {
    var end = index + 2
    while end < pending.count {
      let byte = pending[end]
      if (0x40...0x7E).contains(byte) { break }
      if !(0x20...0x3F).contains(byte) {
        // Not a CSI after all: drop what was read so far.
        return .event(nil, length: end - index)
      }
      end += 1
    }
    guard end < pending.count else {
      if end - index > Self.maximumSequenceLength { return .event(nil, length: end - index) }
      return .incomplete
    }
    let parameterBytes = pending[(index + 2)..<end]
    let length = end - index + 1
    if let first = parameterBytes.first, (0x3C...0x3F).contains(first) {
      return .event(nil, length: length)  // private sequences (mouse reports, replies): ignored
    }
    let parameters = String(decoding: parameterBytes, as: UTF8.self)
      .split(separator: ";", omittingEmptySubsequences: false)
      .map { Int($0) }
    return .event(csi(final: pending[end], parameters: parameters), length: length)
  }

  private func csi(final: UInt8, parameters: [Int?]) -> InputEvent? {
    let first = parameters.first ?? nil
    switch final {
    case UInt8(ascii: "A"): return .key(.up)
    case UInt8(ascii: "B"): return .key(.down)
    case UInt8(ascii: "C"): return .key(.right)
    case UInt8(ascii: "D"): return .key(.left)
    case UInt8(ascii: "H"): return .key(.home)
    case UInt8(ascii: "F"): return .key(.end)
    case UInt8(ascii: "Z"): return .key(.backTab)
    case UInt8(ascii: "P"): return .key(.function(1))
    case UInt8(ascii: "Q"): return .key(.function(2))
    case UInt8(ascii: "R"): return .key(.function(3))
    case UInt8(ascii: "S"): return .key(.function(4))
    case UInt8(ascii: "t"):
      guard first == 48, parameters.count >= 3, let rows = parameters[1],
        let columns = parameters[2], rows > 0, columns > 0
      else { return nil }
      return .resize(TerminalSize(rows: rows, columns: columns))
    case UInt8(ascii: "~"):
      return tilde(first ?? 0).map { .key($0) }
    default:
      return nil
    }
  }

  private func tilde(_ code: Int) -> Key? {
    switch code {
    case 1, 7: return .home
    case 2: return .insert
    case 3: return .delete
    case 4, 8: return .end
    case 5: return .pageUp
    case 6: return .pageDown
    case 11...15: return .function(code - 10)
    case 17...21: return .function(code - 11)
    case 23, 24: return .function(code - 12)
    default: return nil
    }
  }

  private func ss3(_ final: UInt8) -> Key? {
    switch final {
    case UInt8(ascii: "A"): return .up
    case UInt8(ascii: "B"): return .down
    case UInt8(ascii: "C"): return .right
    case UInt8(ascii: "D"): return .left
    case UInt8(ascii: "H"): return .home
    case UInt8(ascii: "F"): return .end
    case UInt8(ascii: "M"): return .enter  // keypad Enter in application mode
    case UInt8(ascii: "P"): return .function(1)
    case UInt8(ascii: "Q"): return .function(2)
    case UInt8(ascii: "R"): return .function(3)
    case UInt8(ascii: "S"): return .function(4)
    default: return nil
    }
  }

  private func decodeUTF8(at index: Int) -> Step {
    let lead = pending[index]
    let replacement = InputEvent.key(.character("\u{FFFD}"))
    let length: Int
    var secondRange: ClosedRange<UInt8> = 0x80...0xBF
    switch lead {
    case 0x20..<0x80:
      return .event(.key(.character(Character(Unicode.Scalar(lead)))), length: 1)
    case 0xC2...0xDF: length = 2
    case 0xE0:
      length = 3
      secondRange = 0xA0...0xBF  // no overlong forms
    case 0xED:
      length = 3
      secondRange = 0x80...0x9F  // no surrogates
    case 0xE1...0xEF: length = 3
    case 0xF0:
      length = 4
      secondRange = 0x90...0xBF
    case 0xF4:
      length = 4
      secondRange = 0x80...0x8F  // nothing past U+10FFFF
    case 0xF1...0xF3: length = 4
    default:
      return .event(replacement, length: 1)
    }
    var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
    for offset in 1..<length {
      guard index + offset < pending.count else { return .incomplete }
      let byte = pending[index + offset]
      let range: ClosedRange<UInt8> = offset == 1 ? secondRange : 0x80...0xBF
      guard range.contains(byte) else { return .event(replacement, length: offset) }
      value = value << 6 | UInt32(byte & 0x3F)
    }
    guard let scalar = Unicode.Scalar(value) else { return .event(replacement, length: length) }
    if value < 0xA0 { return .event(nil, length: length) }  // C1 controls
    return .event(.key(.character(Character(scalar))), length: length)
  }
}
