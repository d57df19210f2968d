import CourierDomain
import Testing

@Suite("MultipartMediaType")
struct MultipartMediaTypeTests {
  static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
    let size = 16 + 4 * compatible.count
    return [0, 0, 0, UInt8(size)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0]
      + compatible.flatMap { Array($0.utf8) }
  }

  static let bmp: [UInt8] = Array("BM".utf8) + [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0]

  @Test(
    "bytes first, then the extension, then octet-stream",
    arguments: [
      // (first bytes, filename, expected)
      ([0xFF, 0xD8, 0xFF, 0xE0], "x.bin", "image/jpeg"),
      ([0xFF, 0xD8, 0xFF, 0xE1], "renamed.png", "image/jpeg"),
      ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], "x", "image/png"),
      (Array("GIF89a...".utf8), "x", "image/gif"),
      (Array("GIF87a...".utf8), "x", "image/gif"),
      (Array("RIFF\u{10}\0\0\0WEBPVP8 ".utf8), "x.jpg", "image/webp"),
      (Array("RIFF\u{10}\0\0\0WAVEfmt ".utf8), "x", "application/octet-stream"),
      (Array("%PDF-1.7\n".utf8), "x", "application/pdf"),
      ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "x", "image/tiff"),
      ([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8], "x", "image/tiff"),
      (bmp, "x", "image/bmp"),
      (Array("BM is how this text starts".utf8), "x.txt", "text/plain"),
      (ftyp("heic", ["mif1", "heic"]), "IMG_0001.JPG", "image/heic"),
      (ftyp("heix", ["mif1"]), "x", "image/heic"),
      (ftyp("mif1", ["heic", "miaf"]), "x", "image/heic"),
      (ftyp("mif1", ["miaf", "avif"]), "x", "image/avif"),
      (ftyp("avif", ["mif1", "miaf"]), "x", "image/avif"),
      (ftyp("avis", []), "x", "image/avif"),
      (ftyp("mif1", ["miaf"]), "x", "image/heif"),
      (ftyp("msf1", []), "x", "image/heif"),
      (ftyp("isom", ["iso2", "mp41"]), "x", "video/mp4"),
      (ftyp("qt  ", []), "x", "video/quicktime"),
      (ftyp("zzzz", []), "clip.mov", "video/quicktime"),
      ([0xFF, 0x0A, 0xFA], "x", "image/jxl"),
      ([], "photo.JPEG", "image/jpeg"),
      ([], "dir.d/photo.heif", "image/heif"),
      ([], "C:\\x\\scan.TIFF", "image/tiff"),
      ([], "drawing.svg", "image/svg+xml"),
      ([], "noextension", "application/octet-stream"),
      ([], ".jpg", "application/octet-stream"),
      ([], "archive.tar.xz", "application/octet-stream"),
      ([0x00, 0x01, 0x02], "unknown.bin", "application/octet-stream"),
      ([0xFF, 0xD8], "short.bin", "application/octet-stream"),
    ] as [([UInt8], String, String)])
  func detect(prefix: [UInt8], filename: String, expected: String) {
    #expect(MultipartMediaType.detect(prefix: prefix, filename: filename) == expected)
  }

  @Test("without a filename, unknown bytes are octet-stream")
  func noFilename() {
    #expect(
      MultipartMediaType.detect(prefix: [1, 2, 3], filename: nil) == "application/octet-stream")
  }
}
