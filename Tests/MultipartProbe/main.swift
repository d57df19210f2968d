// multipart-bench: measurements behind Docs/benchmarks/upload.md. Run through
// Benchmarks/upload-bench.sh, which builds it in release mode and supplies the peers.
//
//   multipart-bench write SOURCE OUT [CHUNK]   body file throughput and peak RSS (JSON line)
//   multipart-bench threshold URL [RUNS]       in-memory vs temp-file bodies, encode and upload
//   multipart-bench peak URL SIZE memory|file   one upload; peak RSS growth (JSON line)
import CourierCore
import CourierDomain
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Peak and current resident set size in KiB, from /proc/self/status.
func memory() -> (peak: Int, now: Int) {
  let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
  func field(_ name: String) -> Int {
    let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
  }
  return (field("VmHWM"), field("VmRSS"))
}

func seconds(_ work: () throws -> Void) rethrows -> Double {
  let start = ContinuousClock.now
  try work()
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func asyncSeconds(_ work: () async throws -> Void) async rethrows -> Double {
  let start = ContinuousClock.now
  try await work()
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func write(source: String, out: String, chunk: Int) throws {
  let before = memory()
  let sourceURL = URL(fileURLWithPath: source)
  let layout = try MultipartForm([.text("title", "bench"), .file("file", at: sourceURL)])
    .layout()
  let writer = MultipartBodyWriter(chunkSize: chunk, inMemoryThreshold: 0)
  let outURL = URL(fileURLWithPath: out)
  try? FileManager.default.removeItem(at: outURL)
  let time = try seconds { try writer.writeFileSynchronously(layout, to: outURL) }
  let after = memory()
  let size =
    (try FileManager.default.attributesOfItem(atPath: out)[.size] as? NSNumber)?
    .int64Value ?? -1
  let rate = Double(size) / time / 1_048_576
  print(
    "{\"bytes\": \(size), \"layout_bytes\": \(layout.contentLength), \"chunk\": "
      + "\(writer.chunkSize), \"seconds\": \(String(format: "%.4f", time)), \"mib_per_s\": "
      + "\(String(format: "%.0f", rate)), \"rss_before_kib\": \(before.now), "
      + "\"peak_rss_kib\": \(after.peak)}")
}

func threshold(url: URL, runs: Int) async throws {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("multipart-bench-\(getpid())")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let session = URLSession(configuration: .ephemeral)
  var request = URLRequest(url: url)
  request.httpMethod = "POST"
  let memoryWriter = MultipartBodyWriter(directory: directory, inMemoryThreshold: .max)
  let fileWriter = MultipartBodyWriter(directory: directory, inMemoryThreshold: 0)

  print(
    "| body | encode: memory | encode: temp file | encode+upload: memory | encode+upload: file |"
      + " file / memory (upload) |")
  print("|---:|---:|---:|---:|---:|---:|")
  for size in [1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20] {
    let source = directory.appendingPathComponent("source-\(size).bin")
    try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131) }).write(to: source)
    let layout = try MultipartForm([.text("title", "bench"), .file("file", at: source)]).layout()
    request.setValue(layout.contentType, forHTTPHeaderField: "Content-Type")
    var encodeMemory: [Double] = []
    var encodeFile: [Double] = []
    var uploadMemory: [Double] = []
    var uploadFile: [Double] = []
    let iterations = size >= 16 << 20 ? max(3, runs / 10) : runs
    for _ in 0..<iterations {
      encodeMemory.append(
        try await asyncSeconds { _ = try await memoryWriter.makeBody(layout) })
      encodeFile.append(
        try await asyncSeconds { try await fileWriter.makeBody(layout).remove() })
      uploadMemory.append(
        try await asyncSeconds {
          let body = try await memoryWriter.makeBody(layout)
          guard case .memory(let data) = body.storage else { return }
          let (_, response) = try await session.upload(for: request, from: data)
          guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw URLError(.badServerResponse)
          }
        })
      uploadFile.append(
        try await asyncSeconds {
          let body = try await fileWriter.makeBody(layout)
          defer { body.remove() }
          guard let file = body.fileURL else { return }
          let (_, response) = try await session.upload(for: request, fromFile: file)
          guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw URLError(.badServerResponse)
          }
        })
    }
    func ms(_ values: [Double]) -> String { String(format: "%.3f ms", median(values) * 1000) }
    let label = size >= 1 << 20 ? "\(size >> 20) MiB" : "\(size >> 10) KiB"
    print(
      "| \(label) | \(ms(encodeMemory)) | \(ms(encodeFile)) | \(ms(uploadMemory)) | "
        + "\(ms(uploadFile)) | \(String(format: "%.2f", median(uploadFile) / median(uploadMemory))) |"
    )
    try FileManager.default.removeItem(at: source)
  }
}

func peak(url: URL, size: Int, inMemory: Bool) async throws {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("multipart-bench-\(getpid())")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let source = directory.appendingPathComponent("source.bin")
  // Written in 1 MiB pieces so making the source does not raise the peak itself.
  try Data().write(to: source)
  let handle = try FileHandle(forWritingTo: source)
  let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131) })
  var left = size
  while left > 0 {
    try handle.write(contentsOf: piece.prefix(min(left, piece.count)))
    left -= min(left, piece.count)
  }
  try handle.close()
  let session = URLSession(configuration: .ephemeral)
  var request = URLRequest(url: url)
  request.httpMethod = "POST"
  // A tiny warm-up upload so URLSession's own start-up is in the baseline.
  _ = try await session.upload(for: request, from: Data("x".utf8))
  let before = memory()
  let layout = try MultipartForm([.text("title", "bench"), .file("file", at: source)]).layout()
  request.setValue(layout.contentType, forHTTPHeaderField: "Content-Type")
  let writer = MultipartBodyWriter(directory: directory, inMemoryThreshold: inMemory ? .max : 0)
  let body = try await writer.makeBody(layout)
  switch body.storage {
  case .memory(let data): _ = try await session.upload(for: request, from: data)
  case .file(let file): _ = try await session.upload(for: request, fromFile: file)
  }
  body.remove()
  let after = memory()
  print(
    "{\"size\": \(size), \"path\": \"\(inMemory ? "memory" : "file")\", "
      + "\"rss_before_kib\": \(before.now), \"peak_rss_kib\": \(after.peak), "
      + "\"growth_kib\": \(after.peak - before.now)}")
}

let arguments = CommandLine.arguments
do {
  switch arguments.dropFirst().first {
  case "write" where arguments.count >= 4:
    try write(
      source: arguments[2], out: arguments[3],
      chunk: arguments.count > 4
        ? Int(arguments[4]) ?? MultipartBodyWriter.defaultChunkSize
        : MultipartBodyWriter.defaultChunkSize)
  case "threshold" where arguments.count >= 3:
    guard let url = URL(string: arguments[2]) else { throw URLError(.badURL) }
    try await threshold(url: url, runs: arguments.count > 3 ? Int(arguments[3]) ?? 30 : 30)
  case "peak" where arguments.count >= 5:
    guard let url = URL(string: arguments[2]), let size = Int(arguments[3]) else {
      throw URLError(.badURL)
    }
    try await peak(url: url, size: size, inMemory: arguments[4] == "memory")
  default:
    FileHandle.standardError.write(
      Data(
        ("usage: multipart-bench write SOURCE OUT [CHUNK] | threshold URL [RUNS] "
          + "| peak URL SIZE memory|file\n").utf8))
    exit(64)
  }
} catch {
  FileHandle.standardError.write(Data("multipart-bench: \(error)\n".utf8))
  exit(1)
}
