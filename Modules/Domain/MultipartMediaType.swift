/// Decides a file part's media type: from its first bytes when they are recognised, then from
/// its extension, then `application/octet-stream`. The bytes win because a photo renamed
/// `.jpg` while it is really HEIC must be announced as what it is.
package enum MultipartMediaType {
  /// How many leading bytes `sniff` looks at; reading this many is enough.
  package static let sniffLength = 64

  /// The fallback for unknown content.
  package static let octetStream = "application/octet-stream"

  /// The media type of a file.
  /// - Parameters:
  ///   - prefix: the file's first bytes (up to `sniffLength`; fewer for a short file).
  ///   - filename: the file's name, for its extension.
  /// - Returns: the media type.
  package static func detect(prefix: some Collection<UInt8>, filename: String?) -> String {
    if let sniffed = sniff(Array(prefix.prefix(sniffLength))) { return sniffed }
    if let filename, let byExtension = fromExtension(of: filename) { return byExtension }
    return octetStream
  }

  /// The media type recognised from leading bytes, or nil.
  /// - Parameter bytes: the leading bytes.
  /// - Returns: the media type.
  package static func sniff(_ bytes: [UInt8]) -> String? {
    func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
      bytes.count >= offset + signature.count
        && Array(bytes[offset..<offset + signature.count]) == signature
    }
    func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
    if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
    if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "image/gif" }
    if starts(ascii("RIFF")) && starts(ascii("WEBP"), at: 8) { return "image/webp" }
    if starts(ascii("%PDF-")) { return "application/pdf" }
    if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) {
      return "image/tiff"
    }
    if starts([0xFF, 0x0A])
      || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
    {
      return "image/jxl"
    }
    if starts(ascii("ftyp"), at: 4) { return isoMediaType(bytes) }
    // "BM" alone is common in text; require the header's reserved fields to be zero too.
    if starts(ascii("BM")) && bytes.count >= 14 && bytes[6..<10].allSatisfy({ $0 == 0 }) {
      return "image/bmp"
    }
    return nil
  }

  /// ISO base media files (HEIF, AVIF, MP4, QuickTime): the major brand, then the compatible
  /// brands, decide.
  static func isoMediaType(_ bytes: [UInt8]) -> String? {
    guard bytes.count >= 12 else { return nil }
    let boxSize = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
    let end = min(bytes.count, max(16, boxSize))
    var brands = [String(decoding: bytes[8..<12], as: UTF8.self)]
    var index = 16
    while index + 4 <= end {
      brands.append(String(decoding: bytes[index..<index + 4], as: UTF8.self))
      index += 4
    }
    let heic: Set = ["heic", "heix", "heim", "heis", "hevc", "hevx"]
    for brand in brands {
      if brand == "avif" || brand == "avis" { return "image/avif" }
      if heic.contains(brand) { return "image/heic" }
      if brand == "mif1" || brand == "msf1" {
        // mif1 is the generic HEIF brand: a more specific compatible brand may follow.
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return "image/avif" }
        if brands.contains(where: { heic.contains($0) }) { return "image/heic" }
        return "image/heif"
      }
      if brand == "qt  " { return "video/quicktime" }
      if ["isom", "iso2", "mp41", "mp42", "avc1", "dash", "M4V "].contains(brand) {
        return "video/mp4"
      }
    }
    return nil
  }

  /// The media type for a filename's extension, or nil.
  /// - Parameter filename: the filename (a path is fine).
  /// - Returns: the media type.
  package static func fromExtension(of filename: String) -> String? {
    let base =
      filename.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
    guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return nil }
    return byExtension[base[base.index(after: dot)...].lowercased()]
  }

  static let byExtension: [String: String] = [
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "jfif": "image/jpeg",
    "png": "image/png", "gif": "image/gif", "webp": "image/webp",
    "heic": "image/heic", "heif": "image/heif", "hif": "image/heif", "avif": "image/avif",
    "tif": "image/tiff", "tiff": "image/tiff", "bmp": "image/bmp", "jxl": "image/jxl",
    "svg": "image/svg+xml", "pdf": "application/pdf",
    "txt": "text/plain", "json": "application/json", "csv": "text/csv",
    "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime",
  ]
}
