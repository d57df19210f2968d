import CourierDomain
import Testing

@Suite("CompressionDecision")
struct CompressionDecisionTests {
  struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    let input: CompressionDecision.Input
    let send: CompressionDecision.Send
    let reason: CompressionDecision.Reason
    let messageContains: [String]
    var testDescription: String { name }
  }

  static let corrupt = CourierError(
    .invalidInput, code: CourierError.corruptImageCode,
    serverMessage: "/photos/IMG_1.jpg is damaged or truncated and can't be decoded.")

  static func input(
    name: String = "IMG_1.jpg", size: Int64 = 3_000_000, isImage: Bool = true,
    acceptable: Bool = false, location: Bool = false, noCompress: Bool = false,
    strip: Bool = true, outcome: CompressionDecision.Outcome
  ) -> CompressionDecision.Input {
    CompressionDecision.Input(
      fileName: name, originalSize: size, isImage: isImage, originalAcceptable: acceptable,
      originalHasLocation: location, noCompress: noCompress,
      options: CompressionOptions(stripMetadata: strip), outcome: outcome)
  }

  static let rows: [Row] = [
    Row(
      name: "a big photo compressed smaller is sent compressed",
      input: input(outcome: .compressed(size: 400_000)), send: .compressed, reason: .compressed,
      messageContains: ["IMG_1.jpg", "3.0 MB", "400 KB"]),
    Row(
      name: "a non-acceptable original is sent compressed even if compression grew it",
      input: input(size: 90_000, outcome: .compressed(size: 120_000)), send: .compressed,
      reason: .compressed,
      messageContains: ["90 KB", "120 KB", "larger", "can't be sent as it is", "long edge"]),
    Row(
      name: "a located original is sent compressed when compression grew it, saying why",
      input: input(size: 346, location: true, outcome: .compressed(size: 3_000)),
      send: .compressed, reason: .compressed,
      messageContains: ["346 bytes", "3 KB", "larger", "location data"]),
    Row(
      name: "a compressed file as large as the original is not called larger",
      input: input(size: 90_000, outcome: .compressed(size: 90_000)), send: .compressed,
      reason: .compressed, messageContains: ["compressed from 90 KB to 90 KB."]),
    Row(
      name: "an acceptable original beats a bigger compressed file",
      input: input(size: 200_000, acceptable: true, outcome: .compressed(size: 260_000)),
      send: .original, reason: .compressedNotSmaller,
      messageContains: ["IMG_1.jpg", "200 KB", "260 KB", "original is sent"]),
    Row(
      name: "an acceptable original beats an equal-size compressed file",
      input: input(size: 200_000, acceptable: true, outcome: .compressed(size: 200_000)),
      send: .original, reason: .compressedNotSmaller, messageContains: []),
    Row(
      name: "an acceptable original loses to a smaller compressed file",
      input: input(size: 200_000, acceptable: true, outcome: .compressed(size: 150_000)),
      send: .compressed, reason: .compressed, messageContains: []),
    Row(
      name: "a failed compression sends the original and says why",
      input: input(outcome: .failed(corrupt)), send: .original, reason: .compressionFailed,
      messageContains: ["IMG_1.jpg couldn't be compressed", "damaged", "original is sent"]),
    Row(
      name: "a failed compression of a located photo sends nothing",
      input: input(location: true, outcome: .failed(corrupt)), send: .nothing,
      reason: .originalHasLocation, messageContains: ["location", "not sent"]),
    Row(
      name: "a failed compression of a located photo sends it when metadata is kept",
      input: input(location: true, strip: false, outcome: .failed(corrupt)), send: .original,
      reason: .compressionFailed, messageContains: []),
    Row(
      name: "compression not run on an image sends the original",
      input: input(outcome: .notAttempted), send: .original, reason: .compressionFailed,
      messageContains: ["not run"]),
    Row(
      name: "--no-compress sends the original",
      input: input(noCompress: true, outcome: .notAttempted), send: .original,
      reason: .compressionDisabled, messageContains: ["IMG_1.jpg", "turned off"]),
    Row(
      name: "--no-compress says that location data goes along",
      input: input(location: true, noCompress: true, outcome: .notAttempted), send: .original,
      reason: .compressionDisabled, messageContains: ["location data included"]),
    Row(
      name: "--no-compress, the original not read: any location data goes along",
      input: {
        var unread = input(location: true, noCompress: true, outcome: .notAttempted)
        unread.originalLocationChecked = false
        return unread
      }(), send: .original, reason: .compressionDisabled,
      messageContains: ["turned off, any location data included"]),
    Row(
      name: "--no-compress wins over a successful compression",
      input: input(noCompress: true, outcome: .compressed(size: 10)), send: .original,
      reason: .compressionDisabled, messageContains: []),
    Row(
      name: "a file that is not an image is sent as is",
      input: input(name: "notes.txt", isImage: false, outcome: .notAttempted), send: .original,
      reason: .notAnImage, messageContains: ["notes.txt is not an image"]),
    Row(
      name: "not an image wins over --no-compress and a failure",
      input: input(
        name: "a.pdf", isImage: false, noCompress: true,
        outcome: .failed(CourierError(.invalidInput, code: CourierError.notAnImageCode))),
      send: .original, reason: .notAnImage, messageContains: ["a.pdf"]),
  ]

  @Test(arguments: rows)
  func decides(_ row: Row) {
    let verdict = CompressionDecision.decide(row.input)
    #expect(verdict.send == row.send)
    #expect(verdict.reason == row.reason)
    for fragment in row.messageContains {
      #expect(verdict.message.contains(fragment), "\(verdict.message)")
    }
  }

  @Test(arguments: [
    (ImageFormat.jpeg, 2048, 1536, false, true, true),
    (.jpeg, 4032, 3024, false, true, false),
    (.jpeg, 1024, 768, true, true, false),
    (.jpeg, 1024, 768, true, false, true),
    (.png, 800, 600, false, true, true),
    (.png, 800, 600, true, true, false),
    (.png, 800, 600, true, false, true),
    (.png, 4000, 3000, false, true, false),
    (.heif, 800, 600, false, true, false),
    (.webp, 800, 600, false, true, true),
    (.webp, 800, 600, true, true, false),
    (.other("GIF"), 100, 100, false, true, false),
    (.jpeg, 100, 2049, false, true, false),
  ])
  func acceptableAsIs(
    format: ImageFormat, width: Int, height: Int, location: Bool, strip: Bool, expected: Bool
  ) {
    let info = ImageInfo(
      format: format, width: width, height: height, hasLocation: location, byteCount: 1)
    let options = CompressionOptions(stripMetadata: strip)
    #expect(CompressionDecision.isAcceptableAsIs(info, options: options) == expected)
  }

  /// A row from the original's header to what is sent: `isAcceptableAsIs` then `decide`, as
  /// `UploadPreparation` asks them.
  struct HeaderRow: Sendable, CustomTestStringConvertible {
    let name: String
    let info: ImageInfo
    let outcome: CompressionDecision.Outcome
    let send: CompressionDecision.Send
    let reason: CompressionDecision.Reason
    var testDescription: String { name }
  }

  static func header(
    _ format: ImageFormat, _ width: Int, _ height: Int, location: Bool = false, bytes: Int64
  ) -> ImageInfo {
    ImageInfo(
      format: format, width: width, height: height, hasLocation: location, byteCount: bytes)
  }

  static let headerRows: [HeaderRow] = [
    HeaderRow(
      name: "a 346-byte PNG is sent as is, not as the 3 KB JPEG compression made of it",
      info: header(.png, 16, 16, bytes: 346), outcome: .compressed(size: 3_012),
      send: .original, reason: .compressedNotSmaller),
    HeaderRow(
      name: "a small WebP that compression grew is sent as is",
      info: header(.webp, 64, 64, bytes: 900), outcome: .compressed(size: 2_400),
      send: .original, reason: .compressedNotSmaller),
    HeaderRow(
      name: "a PNG screenshot that compresses smaller is sent compressed",
      info: header(.png, 1920, 1080, bytes: 2_400_000), outcome: .compressed(size: 310_000),
      send: .compressed, reason: .compressed),
    HeaderRow(
      name: "a small PNG with GPS goes compressed (location stripped) even when that is larger",
      info: header(.png, 16, 16, location: true, bytes: 346), outcome: .compressed(size: 3_012),
      send: .compressed, reason: .compressed),
    HeaderRow(
      name: "a small JPEG with GPS goes compressed even when that is larger",
      info: header(.jpeg, 32, 32, location: true, bytes: 700), outcome: .compressed(size: 1_100),
      send: .compressed, reason: .compressed),
    HeaderRow(
      name: "a small HEIF goes as the JPEG even when that is larger (few can show a HEIF)",
      info: header(.heif, 64, 64, bytes: 1_000), outcome: .compressed(size: 1_500),
      send: .compressed, reason: .compressed),
    HeaderRow(
      name: "a PNG over the long edge goes downsampled even when that is larger",
      info: header(.png, 4096, 64, bytes: 5_000), outcome: .compressed(size: 9_000),
      send: .compressed, reason: .compressed),
    HeaderRow(
      name: "a small PNG with GPS whose compression failed is not sent",
      info: header(.png, 16, 16, location: true, bytes: 346),
      outcome: .failed(CourierError(.invalidInput, code: CourierError.corruptImageCode)),
      send: .nothing, reason: .originalHasLocation),
  ]

  @Test(arguments: headerRows)
  func decidesFromTheHeader(_ row: HeaderRow) {
    let options = CompressionOptions()
    let verdict = CompressionDecision.decide(
      .init(
        fileName: "image", originalSize: row.info.byteCount, isImage: true,
        originalAcceptable: CompressionDecision.isAcceptableAsIs(row.info, options: options),
        originalHasLocation: row.info.hasLocation, noCompress: false, options: options,
        outcome: row.outcome))
    #expect(verdict.send == row.send, "\(verdict.message)")
    #expect(verdict.reason == row.reason)
    // Never a bigger file than the original without saying why.
    if verdict.send == .compressed, case .compressed(let size) = row.outcome,
      size > row.info.byteCount
    {
      #expect(verdict.message.contains("larger, but"), "\(verdict.message)")
    }
  }

  @Test(arguments: [
    (Int64(0), "0 bytes"), (999, "999 bytes"), (1000, "1 KB"), (849_600, "850 KB"),
    (999_499, "999 KB"), (1_000_000, "1.0 MB"), (2_449_999, "2.4 MB"), (24_000_000, "24.0 MB"),
  ])
  func formatsBytes(bytes: Int64, text: String) {
    #expect(CompressionDecision.formatBytes(bytes) == text)
  }

  @Test func optionsClampAndDefault() {
    let defaults = CompressionOptions()
    #expect(defaults.maxLongEdge == 2048 && defaults.quality == 70 && defaults.stripMetadata)
    #expect(CompressionOptions(maxLongEdge: 0, quality: 500).maxLongEdge == 1)
    #expect(CompressionOptions(quality: 500).quality == 100)
    #expect(CompressionOptions(quality: -3).quality == 1)
  }
}
