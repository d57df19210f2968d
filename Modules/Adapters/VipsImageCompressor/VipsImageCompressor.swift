import CVipsShim
import CourierDomain
import CourierPorts
import CourierSystem
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An `ImageCompressor` over libvips: shrink-on-load downsampling (`vips_thumbnail` with a
/// file name, so a 24-megapixel JPEG is never decoded at full size), EXIF auto-rotation,
/// conversion to sRGB, alpha flattened onto white, metadata stripped and JPEG encoding.
///
/// The blocking work runs on one dedicated serial queue, off Swift's cooperative pool: one
/// image at a time bounds memory, and libvips' error buffer is process-wide. libvips is loaded
/// (`dlopen`) and initialised on the first `inspect` or `compress` of the process, not when a
/// compressor is created, with its operation cache off and at most `concurrency` worker
/// threads (fixed by that first call). Without libvips, those calls throw
/// `codec_unavailable` naming the missing library. Cancelling the calling task stops the
/// encoder at its next batch of tiles.
public struct VipsImageCompressor: ImageCompressor {
  /// libvips' default worker threads per image: the online processor count, at most 4.
  ///
  /// From `sysconf`, not `ProcessInfo.activeProcessorCount`, which reads the cgroup's CPU quota
  /// through Foundation's file and URL machinery: a seventh of what `courier status` cost, in
  /// every command that builds the composition root (issue 14).
  @usableFromInline package static let defaultConcurrency = min(
    4, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

  /// Creates a compressor.
  /// - Parameters:
  ///   - concurrency: libvips' worker threads per image; only the first value used in a
  ///     process counts. Defaults to the processor count, at most 4.
  public init(concurrency: Int = VipsImageCompressor.defaultConcurrency) {
    self.concurrency = max(1, concurrency)
  }

  /// libvips' worker threads per image, used when this compressor is the first to load it.
  package let concurrency: Int

  /// The libvips version in use, e.g. "8.14.1" ("unavailable" when it cannot be loaded).
  package static var libvipsVersion: String {
    guard VipsRuntime.initialise(concurrency: VipsImageCompressor.defaultConcurrency) else {
      return "unavailable"
    }
    return courier_vips_version().map { String(cString: $0) } ?? "unknown"
  }

  /// Whether libvips can be loaded and started in this process (it is loaded by this call
  /// when it was not yet).
  package static var isAvailable: Bool {
    VipsRuntime.initialise(concurrency: VipsImageCompressor.defaultConcurrency)
  }

  /// The input formats this build of libvips can decode among those Courier compresses.
  /// HEIF is present only when libvips was built with libheif (Debian 12's is).
  package static var supportedFormats: [ImageFormat] {
    guard VipsRuntime.initialise(concurrency: VipsImageCompressor.defaultConcurrency) else {
      return []
    }
    let candidates: [(ImageFormat, String)] = [
      (.jpeg, "jpegload"), (.png, "pngload"), (.webp, "webpload"), (.heif, "heifload"),
    ]
    return candidates.filter { courier_vips_has_loader($0.1) != 0 }.map(\.0)
  }

  /// Compresses an image file into a JPEG file.
  /// - Parameters:
  ///   - input: the image to read (JPEG, PNG, WebP or HEIC); it is never modified.
  ///   - output: where to write the JPEG; replaced atomically, untouched on failure.
  ///   - options: the long edge, quality and metadata policy.
  /// - Returns: sizes and dimensions of what was written.
  /// - Throws: `CourierError` naming the file: `.fileUnavailable` when it cannot be read or
  ///   the output cannot be written; `.invalidInput` with code `not_an_image`,
  ///   `unsupported_format` or `corrupt_image`; `.cancelled` when the task was cancelled.
  public func compress(input: URL, output: URL, options: CompressionOptions) async throws
    -> CompressionResult
  {
    try Task.checkCancellation(input: input)
    try VipsRuntime.requireInitialised(concurrency: concurrency, input: input)
    let inputSize = try Self.fileSize(input)
    guard input.standardizedFileURL.path != output.standardizedFileURL.path else {
      throw CourierError(
        .invalidInput, code: "output_is_input",
        serverMessage: "The compressed copy of \(input.path) can't replace the original itself.",
        context: "compress \(input.path)")
    }
    let directory = output.deletingLastPathComponent()
    guard FileManager.default.isWritableFile(atPath: directory.path) else {
      throw CourierError(
        .fileUnavailable, code: "output_unwritable",
        serverMessage: "Can't write the compressed photo to \(directory.path).",
        context: "compress \(input.path)")
    }
    let temporary = directory.appendingPathComponent(
      ".\(output.lastPathComponent).\(UUID().uuidString).partial")
    let token = CancelToken()
    let job = Job(
      input: input.path, output: temporary.path, maxEdge: Int32(clamping: options.maxLongEdge),
      quality: Int32(clamping: options.quality), strip: options.stripMetadata)
    let outcome = await withTaskCancellationHandler {
      await VipsRuntime.run { job.run(token: token) }
    } onCancel: {
      token.cancel()
    }
    let inputInfo: courier_vips_info
    let outputInfo: courier_vips_info
    switch outcome {
    case .success(let infos): (inputInfo, outputInfo) = infos
    case .failure(let failure):
      try? FileManager.default.removeItem(at: temporary)
      throw failure.error(for: input)
    }
    let format = Self.format(of: inputInfo)
    guard Self.isCompressible(format) else {
      try? FileManager.default.removeItem(at: temporary)
      throw Self.unsupported(format, input: input)
    }
    if Task.isCancelled {
      try? FileManager.default.removeItem(at: temporary)
      throw CourierError(
        .cancelled, underlying: "cancelled after libvips finished",
        context: "compress \(input.path)")
    }
    guard rename(temporary.path, output.path) == 0 else {
      let reason = String(cString: strerror(errno))
      try? FileManager.default.removeItem(at: temporary)
      throw CourierError(
        .fileUnavailable, code: "output_unwritable",
        serverMessage: "Can't write the compressed photo to \(output.path).",
        underlying: reason, context: "compress \(input.path)")
    }
    let info = Self.imageInfo(inputInfo, byteCount: inputSize)
    return CompressionResult(
      outputSize: (try? Self.fileSize(output)) ?? 0, width: Int(outputInfo.width),
      height: Int(outputInfo.height), inputSize: inputSize,
      orientationApplied: info.orientation != 1, input: info)
  }

  /// Reads an image's header without decoding its pixels.
  /// - Parameter input: the file.
  /// - Returns: its format, size, orientation and metadata.
  /// - Throws: `CourierError` as `compress(input:output:options:)` does.
  public func inspect(_ input: URL) async throws -> ImageInfo {
    try Task.checkCancellation(input: input)
    try VipsRuntime.requireInitialised(concurrency: concurrency, input: input)
    let size = try Self.fileSize(input)
    let path = input.path
    let outcome = await VipsRuntime.run { () -> Result<courier_vips_info, VipsFailure> in
      var info = courier_vips_info()
      var message = [CChar](repeating: 0, count: 1024)
      let status = courier_vips_probe(path, &info, &message, message.count)
      guard status == Int32(COURIER_VIPS_OK) else {
        return .failure(VipsFailure(status: status, message: message))
      }
      return .success(info)
    }
    switch outcome {
    case .success(let info):
      let image = Self.imageInfo(info, byteCount: size)
      guard Self.isCompressible(image.format) else {
        throw Self.unsupported(image.format, input: input)
      }
      return image
    case .failure(let failure):
      throw failure.error(for: input)
    }
  }

  static func isCompressible(_ format: ImageFormat) -> Bool {
    switch format.storage {
    case .jpeg, .png, .webp, .heif: return true
    case .other: return false
    }
  }

  static func unsupported(_ format: ImageFormat, input: URL) -> CourierError {
    CourierError(
      .invalidInput, code: CourierError.unsupportedFormatCode,
      serverMessage:
        "\(input.path) is a \(format) image; only JPEG, PNG, WebP and HEIC photos are compressed.",
      context: "compress \(input.path)")
  }

  static func fileSize(_ url: URL) throws -> Int64 {
    // stat(2), not FileManager's attributes, which also look up the owner's user and group
    // names (issue 14).
    var info = stat()
    guard stat(url.path, &info) == 0 else {
      throw CourierError(
        .fileUnavailable, code: "file_unreadable",
        serverMessage: "Can't read \(url.path): no such file or no permission.",
        underlying: String(cString: strerror(errno)), context: "compress \(url.path)")
    }
    return Int64(info.st_size)
  }

  static func format(of info: courier_vips_info) -> ImageFormat {
    let loader = withUnsafeBytes(of: info.loader) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    // libvips names loaders by class ("VipsForeignLoadJpegFile") or nickname ("jpegload").
    let name = loader.lowercased()
    if name.contains("jpeg") { return .jpeg }
    if name.contains("png") { return .png }
    if name.contains("webp") { return .webp }
    if name.contains("heif") { return .heif }
    return .other(loader)
  }

  static func imageInfo(_ info: courier_vips_info, byteCount: Int64) -> ImageInfo {
    ImageInfo(
      format: format(of: info), width: Int(info.width), height: Int(info.height),
      orientation: Int(info.orientation), hasAlpha: info.has_alpha != 0,
      hasLocation: info.has_location != 0, hasMetadata: info.has_metadata != 0,
      byteCount: byteCount)
  }
}

/// The process-wide libvips state: initialisation and the one queue all work runs on.
enum VipsRuntime {
  private static let queue = DispatchQueue(label: "courier.vips", qos: .userInitiated)
  private static let initialised = Mutex<Int32?>(nil)

  /// Initialises libvips once (the C side uses `pthread_once`); returns whether it worked.
  static func initialise(concurrency: Int) -> Bool {
    initialised.withLock { state in
      if let state { return state == Int32(COURIER_VIPS_OK) }
      let result = courier_vips_init(Int32(max(1, concurrency)))
      state = result
      return result == Int32(COURIER_VIPS_OK)
    }
  }

  static func requireInitialised(concurrency: Int, input: URL) throws {
    guard initialise(concurrency: concurrency) else {
      let why = String(cString: courier_vips_load_error())
      let missing = initialised.withLock { $0 } == Int32(COURIER_VIPS_NOT_INSTALLED)
      throw CourierError(
        .invalidInput, code: "codec_unavailable",
        serverMessage: missing
          ? "The image library libvips (\(COURIER_VIPS_LIBRARY)) is not installed, so photos "
            + "can't be compressed. Install it (Debian: apt-get install libvips42), or send "
            + "the file as it is with --no-compress."
          : "The image library (libvips) could not be started.",
        underlying: why, context: "compress \(input.path)")
    }
  }

  /// Runs blocking work on the libvips queue and resumes the caller with its value.
  static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: work()) }
    }
  }
}

/// One compression's parameters, as plain values that cross to the libvips queue.
struct Job: Sendable {
  let input: String
  let output: String
  let maxEdge: Int32
  let quality: Int32
  let strip: Bool

  func run(token: CancelToken) -> Result<(courier_vips_info, courier_vips_info), VipsFailure> {
    var inputInfo = courier_vips_info()
    var outputInfo = courier_vips_info()
    var message = [CChar](repeating: 0, count: 1024)
    // Refuse formats Courier does not send (SVG, PDF, GIF...) before decoding anything.
    let probe = courier_vips_probe(input, &inputInfo, &message, message.count)
    guard probe == Int32(COURIER_VIPS_OK) else {
      return .failure(VipsFailure(status: probe, message: message))
    }
    guard VipsImageCompressor.isCompressible(VipsImageCompressor.format(of: inputInfo)) else {
      return .success((inputInfo, outputInfo))
    }
    let status = token.withPointer { pointer in
      courier_vips_compress(
        input, output, maxEdge, quality, strip ? 1 : 0, pointer, &inputInfo, &outputInfo,
        &message, message.count)
    }
    guard status == Int32(COURIER_VIPS_OK) else {
      return .failure(VipsFailure(status: status, message: message))
    }
    return .success((inputInfo, outputInfo))
  }
}

/// A failure reported by the shim, turned into a `CourierError` naming the file.
struct VipsFailure: Error, Sendable {
  /// The `underlying` of a cancellation that libvips itself honoured mid-work.
  static let stoppedByLibvips = "libvips stopped mid-work"

  let status: Int32
  let detail: String

  init(status: Int32, message: [CChar]) {
    self.status = status
    self.detail = String(
      decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
      as: UTF8.self)
  }

  func error(for input: URL) -> CourierError {
    let path = input.path
    let context = "compress \(path)"
    let underlying = detail.isEmpty ? nil : detail
    switch status {
    case Int32(COURIER_VIPS_UNREADABLE):
      return CourierError(
        .fileUnavailable, code: "file_unreadable",
        serverMessage: "Can't read \(path): \(detail.isEmpty ? "unreadable" : detail).",
        underlying: underlying, context: context)
    case Int32(COURIER_VIPS_CANCELLED):
      return CourierError(.cancelled, underlying: VipsFailure.stoppedByLibvips, context: context)
    case Int32(COURIER_VIPS_NOT_AN_IMAGE):
      if HEIFSniffer.looksLikeHEIF(input) && !VipsImageCompressor.supportedFormats.contains(.heif) {
        return CourierError(
          .invalidInput, code: CourierError.unsupportedFormatCode,
          serverMessage:
            "\(path) is a HEIC/HEIF photo, and this system's libvips has no HEIF decoder.",
          underlying: underlying, context: context)
      }
      return CourierError(
        .invalidInput, code: CourierError.notAnImageCode,
        serverMessage: "\(path) is not an image this app can read.", underlying: underlying,
        context: context)
    default:
      return CourierError(
        .invalidInput, code: CourierError.corruptImageCode,
        serverMessage: "\(path) is damaged or truncated and can't be decoded.",
        underlying: underlying, context: context)
    }
  }
}

/// Recognises an ISO-BMFF HEIF file by its `ftyp` brand, to say "HEIC not supported" rather
/// than "not an image" when libvips lacks a HEIF loader.
enum HEIFSniffer {
  static let brands: Set<String> = [
    "heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "avif",
  ]

  static func looksLikeHEIF(_ url: URL) -> Bool {
    guard let file = try? OpenFile.reading(url.path),
      let head = try? file.read(upToCount: 12), head.count == 12
    else { return false }
    let bytes = [UInt8](head)
    guard String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp" else { return false }
    return brands.contains(String(decoding: bytes[8..<12], as: UTF8.self))
  }
}

/// Owns the shim's cancellation token. Sendable without a lock of Swift's: it keeps only the
/// token's address, set once at init, and the token's flag is a C11 atomic in the shim, written
/// by `cancel()` from any thread and read by libvips' workers.
final class CancelToken: Sendable {
  private let address: Int

  init() { address = Int(bitPattern: UnsafeRawPointer(courier_vips_token_new())) }

  deinit { courier_vips_token_free(pointer) }

  private var pointer: OpaquePointer? { OpaquePointer(bitPattern: address) }

  func cancel() { courier_vips_token_cancel(pointer) }

  func withPointer<T>(_ body: (OpaquePointer?) -> T) -> T { body(pointer) }
}

extension Task where Success == Never, Failure == Never {
  static func checkCancellation(input: URL) throws {
    if Task.isCancelled {
      throw CourierError(.cancelled, context: "compress \(input.path)")
    }
  }
}
