// Compresses one image with VipsImageCompressor, for Benchmarks/compression/run.sh.
// Usage: courier-compress-bench INPUT OUTPUT [MAX_LONG_EDGE] [QUALITY]
import Courier
import CourierVips
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
  FileHandle.standardError.write(
    Data("usage: courier-compress-bench INPUT OUTPUT [MAX_LONG_EDGE] [QUALITY]\n".utf8))
  exit(64)
}
let options = CompressionOptions(
  maxLongEdge: arguments.count > 3 ? Int(arguments[3]) ?? 2048 : 2048,
  quality: arguments.count > 4 ? Int(arguments[4]) ?? 70 : 70)
let compressor: any ImageCompressor = VipsImageCompressor()
do {
  let output = URL(fileURLWithPath: arguments[2])
  _ = try await compressor.compress(
    input: URL(fileURLWithPath: arguments[1]), output: output, options: options)
  let size = (try? FileManager.default.attributesOfItem(atPath: output.path))?[.size] as? Int ?? 0
  print("wrote \(size) bytes")
} catch let error as CourierError {
  FileHandle.standardError.write(Data("\(error.userMessage)\n".utf8))
  exit(1)
}
