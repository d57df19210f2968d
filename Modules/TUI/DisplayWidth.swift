import CourierSystem

/// How many terminal columns text takes, and how to cut and pad it by columns rather than by
/// bytes or characters.
///
/// A scalar's width follows `wcwidth(3)` as glibc computes it (the tables tmux, xterm and VTE
/// use): two for East Asian wide and full-width scalars (CJK, most emoji), zero for combining
/// marks and format characters, one otherwise. A grapheme cluster is the sum of its scalars, so
/// a cut never splits a cluster and the count agrees with terminals that count code points
/// (decision 0601).
package enum DisplayWidth {
  /// The columns one scalar takes.
  /// - Parameter scalar: the scalar.
  /// - Returns: 0, 1 or 2.
  package static func of(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
    if value < 0x300 { return 1 }
    if isZeroWidth(scalar) { return 0 }
    if (0x20000...0x3FFFD).contains(value) { return 2 }
    return isWide(value) ? 2 : 1
  }

  /// The columns a grapheme cluster takes.
  /// - Parameter character: the character.
  /// - Returns: the sum of its scalars' widths.
  package static func of(_ character: Character) -> Int {
    character.unicodeScalars.reduce(0) { $0 + of($1) }
  }

  /// The columns a string takes (no escape sequences inside).
  /// - Parameter text: the text.
  /// - Returns: the width.
  package static func of(_ text: some StringProtocol) -> Int {
    text.unicodeScalars.reduce(0) { $0 + of($1) }
  }

  /// Text that fits in `width` columns: cut at a cluster boundary and ended with `…` when it
  /// does not fit, never wider than `width`.
  /// - Parameters:
  ///   - text: the text (already escaped: `LogText`).
  ///   - width: the columns available.
  /// - Returns: the text, or its beginning and an ellipsis.
  package static func truncate(_ text: String, to width: Int) -> String {
    guard width > 0 else { return "" }
    if of(text) <= width { return text }
    var result = ""
    var used = 0
    for character in text {
      let w = of(character)
      if used + w > width - 1 { break }
      result.append(character)
      used += w
    }
    return result + "…"
  }

  /// Text truncated and then padded with spaces to exactly `width` columns.
  /// - Parameters:
  ///   - text: the text (already escaped: `LogText`).
  ///   - width: the columns.
  /// - Returns: text exactly `width` columns wide.
  package static func fit(_ text: String, to width: Int) -> String {
    let cut = truncate(text, to: width)
    let missing = width - of(cut)
    return missing > 0 ? cut + String(repeating: " ", count: missing) : cut
  }

  /// Splits text into lines of at most `width` columns, breaking at spaces where possible and
  /// inside long words otherwise; the text's own newlines start new lines.
  /// - Parameters:
  ///   - text: any text.
  ///   - width: the columns.
  /// - Returns: the lines, each escaped as every printed text is (`LogText`).
  package static func wrap(_ text: String, to width: Int) -> [String] {
    guard width > 0 else { return [] }
    var lines: [String] = []
    let paragraphs = text.split(omittingEmptySubsequences: false) {
      $0 == "\n" || $0 == "\r\n"
    }
    for paragraph in paragraphs {
      var line = ""
      var lineWidth = 0
      for word in LogText.escaped(String(paragraph)).split(
        separator: " ", omittingEmptySubsequences: false)
      {
        var word = Substring(word)
        let wordWidth = of(word)
        let gap = line.isEmpty ? 0 : 1
        if lineWidth + gap + wordWidth <= width {
          if gap == 1 { line.append(" ") }
          line += word
          lineWidth += gap + wordWidth
          continue
        }
        if !line.isEmpty {
          lines.append(line)
          line = ""
          lineWidth = 0
        }
        while of(word) > width {
          var head = ""
          var used = 0
          var index = word.startIndex
          while index < word.endIndex, used + of(word[index]) <= width {
            head.append(word[index])
            used += of(word[index])
            index = word.index(after: index)
          }
          if index == word.startIndex { index = word.index(after: index) }  // wider than width
          lines.append(head)
          word = word[index...]
        }
        line = String(word)
        lineWidth = of(word)
      }
      lines.append(line)
    }
    return lines
  }

  private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return true }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark:
      return true
    case .format:
      // Soft hyphen and the prepended concatenation marks are printed (glibc gives them 1).
      return
        !(value == 0xAD || (0x600...0x605).contains(value) || value == 0x6DD
        || value == 0x70F || value == 0x890 || value == 0x891 || value == 0x8E2
        || value == 0x110BD || value == 0x110CD)
    default:
      return false
    }
  }

  private static func isWide(_ value: UInt32) -> Bool {
    var low = 0
    var high = wideRanges.count - 1
    while low <= high {
      let mid = (low + high) / 2
      let range = wideRanges[mid]
      if value < range.0 {
        high = mid - 1
      } else if value > range.1 {
        low = mid + 1
      } else {
        return true
      }
    }
    return false
  }
}
