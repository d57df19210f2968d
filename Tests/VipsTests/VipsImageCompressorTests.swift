import CourierDomain
import CourierPorts
import CourierVips
import Foundation
import Testing

@Suite("VipsImageCompressor (real libvips)")
struct VipsImageCompressorTests {
  let compressor: any ImageCompressor = VipsImageCompressor()

  @Test func reportsLibvipsAndItsLoaders() {
    #expect(VipsImageCompressor.libvipsVersion.hasPrefix("8."))
    let formats = VipsImageCompressor.supportedFormats
    #expect(formats.contains(.jpeg) && formats.contains(.png) && formats.contains(.webp))
  }

  @Test func appliesEXIFOrientationSixByRotatingThePixels() async throws {
    let scratch = try Scratch()
    let input = scratch.file("rotated.jpg")
    // Stored landscape, blue, with a red square in the stored top-left corner.
    try await Tool.convert(
      "-size", "400x200", "xc:blue", "-fill", "red", "-draw", "rectangle 0,0 59,59",
      "-quality", "95", input.path)
    try EXIF.insert(into: input, orientation: 6)
    #expect(try await Tool.field(input, "orientation") == "6")

    let output = scratch.file("out.jpg")
    let result = try await compressor.compress(
      input: input, output: output, options: CompressionOptions())

    #expect(result.orientationApplied)
    #expect(result.input.orientation == 6)
    #expect((result.width, result.height) == (200, 400))
    #expect(try await Tool.field(output, "width") == "200")
    #expect(try await Tool.field(output, "height") == "400")
    // Orientation 6 turns the picture 90° clockwise: the stored top-left is now top-right.
    let topRight = try await Tool.pixel(output, x: 190, y: 10)
    let topLeft = try await Tool.pixel(output, x: 10, y: 10)
    #expect(topRight[0] > 200 && topRight[2] < 60, "top-right should be red: \(topRight)")
    #expect(topLeft[2] > 200 && topLeft[0] < 60, "top-left should be blue: \(topLeft)")
  }

  @Test func shrinksALargeJPEGToTheMaximumLongEdge() async throws {
    let scratch = try Scratch()
    let input = scratch.file("large.jpg")
    try await Tool.vips("black", input.path, "6000", "4000", "--bands", "3")
    let output = scratch.file("out.jpg")

    let result = try await compressor.compress(
      input: input, output: output, options: CompressionOptions())

    #expect(result.width == 2048)
    #expect((1365...1366).contains(result.height))
    #expect(result.inputSize == Int64(try Data(contentsOf: input).count))
    #expect(result.outputSize == Int64(try Data(contentsOf: output).count))
    #expect(!result.orientationApplied)
    #expect(try await Tool.field(output, "width") == "2048")
  }

  @Test(arguments: [(800, 600), (2048, 100), (30, 2000)])
  func neverUpscalesASmallImage(width: Int, height: Int) async throws {
    let scratch = try Scratch()
    let input = scratch.file("small.jpg")
    try await Tool.vips("black", input.path, "\(width)", "\(height)", "--bands", "3")
    let output = scratch.file("out.jpg")

    let result = try await compressor.compress(
      input: input, output: output, options: CompressionOptions())

    #expect((result.width, result.height) == (width, height))
  }

  @Test func flattensPNGAlphaOntoWhite() async throws {
    let scratch = try Scratch()
    let input = scratch.file("alpha.png")
    try await Tool.convert(
      "-size", "300x200", "xc:none", "-fill", "red", "-draw", "rectangle 100,50 199,149",
      input.path)
    let output = scratch.file("out.jpg")

    let result = try await compressor.compress(
      input: input, output: output, options: CompressionOptions())

    #expect(result.input.format == .png)
    #expect(result.input.hasAlpha)
    #expect((result.width, result.height) == (300, 200))
    #expect(try await Tool.field(output, "bands") == "3")
    let corner = try await Tool.pixel(output, x: 5, y: 5)
    #expect(
      corner.count == 3 && corner.allSatisfy { $0 > 245 }, "corner should be white: \(corner)")
    let centre = try await Tool.pixel(output, x: 150, y: 100)
    #expect(centre[0] > 200 && centre[1] < 60, "centre should be red: \(centre)")
  }

  @Test func flattens16BitAlphaOntoWhiteToo() async throws {
    let scratch = try Scratch()
    let eightBit = scratch.file("a8.png")
    try await Tool.convert(
      "-size", "100x100", "xc:none", "-fill", "red", "-draw", "rectangle 20,20 79,79",
      eightBit.path)
    let input = scratch.file("a16.png")
    try await Tool.vips("colourspace", eightBit.path, input.path, "rgb16")
    #expect(try await Tool.field(input, "format").contains("USHORT"))
    let output = scratch.file("out.jpg")

    _ = try await compressor.compress(input: input, output: output, options: CompressionOptions())

    let corner = try await Tool.pixel(output, x: 2, y: 2)
    #expect(
      corner.count == 3 && corner.allSatisfy { $0 > 245 }, "corner should be white: \(corner)")
    let centre = try await Tool.pixel(output, x: 50, y: 50)
    #expect(centre[0] > 240 && centre[1] < 20, "centre should be red: \(centre)")
  }

  @Test func convertsAnEmbeddedProfileToSRGBBeforeStrippingIt() async throws {
    let scratch = try Scratch()
    let srgb = scratch.file("red.png")
    try await Tool.convert("-size", "64x64", "xc:rgb(200,40,40)", "-depth", "8", srgb.path)
    let p3 = scratch.file("p3.v")
    try await Tool.vips("icc_transform", srgb.path, p3.path, "p3", "--input-profile", "srgb")
    let input = scratch.file("p3.jpg")
    try await Tool.vips("jpegsave", p3.path, input.path, "--Q", "95")
    #expect(try await Tool.header(input).contains("icc-profile-data"))
    let stored = try await Tool.pixel(input, x: 5, y: 5)
    #expect(abs(stored[0] - 200) > 10, "the P3 numbers differ from the sRGB ones: \(stored)")
    let output = scratch.file("out.jpg")

    _ = try await compressor.compress(input: input, output: output, options: CompressionOptions())

    #expect(try await !Tool.header(output).contains("icc-profile-data"))
    let shown = try await Tool.pixel(output, x: 5, y: 5)
    let expected: [Double] = [200, 40, 40]
    #expect(zip(shown, expected).allSatisfy { abs($0 - $1) <= 6 }, "\(shown)")
  }

  @Test func compressesWebP() async throws {
    let scratch = try Scratch()
    let png = scratch.file("g.png")
    try await Tool.convert("-size", "3000x1500", "gradient:red-blue", png.path)
    let input = scratch.file("photo.webp")
    try await Tool.vips("copy", png.path, input.path)
    let output = scratch.file("out.jpg")

    let result = try await compressor.compress(
      input: input, output: output, options: CompressionOptions())

    #expect(result.input.format == .webp)
    #expect((result.width, result.height) == (2048, 1024))
    #expect(try await Tool.field(output, "vips-loader") == "jpegload")
  }

  @Test func compressesHEICWhenLibvipsHasAHEIFDecoder() async throws {
    let scratch = try Scratch()
    let input = scratch.file("photo.heic")
    let output = scratch.file("out.jpg")
    if VipsImageCompressor.supportedFormats.contains(.heif) {
      let png = scratch.file("g.png")
      try await Tool.convert("-size", "640x320", "gradient:green-yellow", png.path)
      try await Tool.vips("copy", png.path, input.path)
      let result = try await compressor.compress(
        input: input, output: output, options: CompressionOptions(maxLongEdge: 256))
      #expect(result.input.format == .heif)
      #expect((result.width, result.height) == (256, 128))
      #expect(try await Tool.field(output, "vips-loader") == "jpegload")
    } else {
      // Only the ISO-BMFF brand: enough to be recognised as HEIC and refused clearly.
      var box = Data([0, 0, 0, 24])
      box.append(Data("ftypheic\0\0\0\0mif1heic".utf8))
      try box.write(to: input)
      let error = try await #require(throws: CourierError.self) {
        try await compressor.compress(input: input, output: output, options: CompressionOptions())
      }
      #expect(error.code == CourierError.unsupportedFormatCode)
      #expect(error.userMessage.contains("photo.heic"))
    }
  }

  @Test func stripsGPSAndAllEXIF() async throws {
    let scratch = try Scratch()
    let input = scratch.file("located.jpg")
    try await Tool.convert("-size", "640x480", "xc:orange", input.path)
    try EXIF.insert(into: input, gps: true)
    #expect(try await Tool.header(input).contains("exif-ifd3-GPSLatitude"))
    let before = try await compressor.inspect(input)
    #expect(before.hasLocation && before.hasMetadata)

    let output = scratch.file("out.jpg")
    _ = try await compressor.compress(input: input, output: output, options: CompressionOptions())

    let header = try await Tool.header(output)
    #expect(!header.contains("exif"), "output still has EXIF: \(header)")
    #expect(!header.contains("GPS"))
    #expect(!header.contains("xmp-data"))
    #expect(try !EXIF.containsExifOrGPS(output))
    let after = try await compressor.inspect(output)
    #expect(!after.hasLocation && !after.hasMetadata)
  }

  @Test func keepsMetadataWhenAskedTo() async throws {
    let scratch = try Scratch()
    let input = scratch.file("located.jpg")
    try await Tool.convert("-size", "640x480", "xc:orange", input.path)
    try EXIF.insert(into: input, gps: true)
    let output = scratch.file("out.jpg")

    _ = try await compressor.compress(
      input: input, output: output, options: CompressionOptions(stripMetadata: false))

    #expect(try await compressor.inspect(output).hasLocation)
  }

  @Test func qualityChangesTheSize() async throws {
    let scratch = try Scratch()
    let input = scratch.file("noisy.jpg")
    try await Tool.convert(
      "-seed", "7", "-size", "800x600", "plasma:fractal", "-quality", "95", input.path)
    let low = try await compressor.compress(
      input: input, output: scratch.file("q30.jpg"), options: CompressionOptions(quality: 30))
    let high = try await compressor.compress(
      input: input, output: scratch.file("q90.jpg"), options: CompressionOptions(quality: 90))

    #expect(
      high.outputSize > low.outputSize * 3 / 2, "q90 \(high.outputSize), q30 \(low.outputSize)")
    #expect(CompressionOptions(quality: 70) == CompressionOptions())
  }

  @Test func truncatedJPEGIsAClearErrorAndLosesNothing() async throws {
    let scratch = try Scratch()
    let whole = scratch.file("whole.jpg")
    try await Tool.convert("-seed", "3", "-size", "600x450", "plasma:fractal", whole.path)
    let data = try Data(contentsOf: whole)
    let input = scratch.file("broken.jpg")
    try data.prefix(data.count * 2 / 5).write(to: input)
    let output = scratch.file("out.jpg")
    try Data("previous".utf8).write(to: output)

    let error = try await #require(throws: CourierError.self) {
      try await compressor.compress(input: input, output: output, options: CompressionOptions())
    }

    #expect(error.kind == .invalidInput)
    #expect(error.code == CourierError.corruptImageCode)
    #expect(error.userMessage.contains("broken.jpg"))
    #expect(try Data(contentsOf: output) == Data("previous".utf8))
    #expect(try Data(contentsOf: input) == data.prefix(data.count * 2 / 5))
    #expect(try scratch.contents() == ["broken.jpg", "out.jpg", "whole.jpg"])
  }

  @Test func textFileIsNotAnImage() async throws {
    let scratch = try Scratch()
    let input = scratch.file("notes.txt")
    try Data("Shopping list: bread, milk.\n".utf8).write(to: input)

    let error = try await #require(throws: CourierError.self) {
      try await compressor.compress(
        input: input, output: scratch.file("out.jpg"), options: CompressionOptions())
    }

    #expect(error.kind == .invalidInput)
    #expect(error.code == CourierError.notAnImageCode)
    #expect(error.userMessage.contains("notes.txt"))
    await #expect(throws: CourierError.self) { try await compressor.inspect(input) }
    #expect(try scratch.contents() == ["notes.txt"])
  }

  @Test func unsupportedImageFormatIsRefusedByName() async throws {
    let scratch = try Scratch()
    let input = scratch.file("drawing.gif")
    try await Tool.convert("-size", "40x40", "xc:green", input.path)

    let error = try await #require(throws: CourierError.self) {
      try await compressor.compress(
        input: input, output: scratch.file("out.jpg"), options: CompressionOptions())
    }

    #expect(error.code == CourierError.unsupportedFormatCode)
    #expect(error.userMessage.contains("drawing.gif"))
    #expect(try scratch.contents() == ["drawing.gif"])
  }

  @Test func refusesToOverwriteItsInput() async throws {
    let scratch = try Scratch()
    let input = scratch.file("photo.jpg")
    try await Tool.vips("black", input.path, "3000", "2000", "--bands", "3")
    let original = try Data(contentsOf: input)

    let error = try await #require(throws: CourierError.self) {
      try await compressor.compress(input: input, output: input, options: CompressionOptions())
    }

    #expect(error.kind == .invalidInput)
    #expect(error.userMessage.contains("photo.jpg"))
    #expect(try Data(contentsOf: input) == original)
  }

  @Test func missingFileIsUnavailable() async throws {
    let scratch = try Scratch()
    let error = try await #require(throws: CourierError.self) {
      try await compressor.compress(
        input: scratch.file("gone.jpg"), output: scratch.file("out.jpg"),
        options: CompressionOptions())
    }
    #expect(error.kind == .fileUnavailable)
    #expect(error.userMessage.contains("gone.jpg"))
  }

  @Test func cancelledTaskWritesNothing() async throws {
    let scratch = try Scratch()
    let input = scratch.file("large.jpg")
    try await Tool.vips("black", input.path, "3000", "2000", "--bands", "3")
    let output = scratch.file("out.jpg")
    let compressor = self.compressor

    let task = Task {
      try await compressor.compress(input: input, output: output, options: CompressionOptions())
    }
    task.cancel()
    let result = await task.result

    #expect(throws: CourierError.self) { try result.get() }
    if case .failure(let error as CourierError) = result { #expect(error.kind == .cancelled) }
    #expect(try scratch.contents() == ["large.jpg"])
  }

  @Test func cancellingDuringTheEncodeStopsLibvips() async throws {
    let scratch = try Scratch()
    let input = scratch.file("huge.jpg")
    // No downsampling (long edge 8000): libvips decodes and encodes all 48 megapixels.
    try await Tool.vips("black", input.path, "8000", "6000", "--bands", "3")
    let output = scratch.file("out.jpg")
    let compressor = self.compressor
    let task = Task {
      try await compressor.compress(
        input: input, output: output, options: CompressionOptions(maxLongEdge: 8000))
    }
    // The hidden .partial file appears when libvips opens its output, i.e. once the encode
    // has begun: cancel from then on. A dedicated thread watches, so that a busy cooperative
    // pool cannot delay the cancel past the encode. Bounded; no fixed sleep.
    let watcher = Thread {
      let deadline = Date().addingTimeInterval(30)
      while ((try? scratch.contents().count) ?? 0) < 2, Date() < deadline { sched_yield() }
      task.cancel()
    }
    watcher.start()
    let result = await task.result

    if case .failure(let error as CourierError) = result {
      #expect(error.kind == .cancelled)
      // Stopped inside libvips (its kill flag), not merely discarded after a full encode.
      #expect(error.underlying == "libvips stopped mid-work")
    } else {
      Issue.record("expected a cancellation, got \(result)")
    }
    #expect(try scratch.contents() == ["huge.jpg"])
  }

  @Test func concurrentCallsAllSucceed() async throws {
    let scratch = try Scratch()
    let input = scratch.file("in.jpg")
    try await Tool.vips("black", input.path, "2500", "1000", "--bands", "3")
    let compressor = self.compressor

    let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<4 {
        group.addTask {
          try await compressor.compress(
            input: input, output: scratch.file("out\(index).jpg"),
            options: CompressionOptions(maxLongEdge: 500 * (index + 1))
          ).width
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }

    #expect(sizes.sorted() == [500, 1000, 1500, 2000])
  }
}
