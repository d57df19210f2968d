import Courier
// courier-transport-bench: drives one transport adapter for Benchmarks/transport/run.sh and
// prints one JSON line with the time the transfer itself took (process start-up excluded).
//
//   courier-transport-bench upload --transport urlsession|curl --url URL --body FILE
//       sends FILE, a whole multipart body already on disk, with `send(_:body: .file(…))`
//   courier-transport-bench upload --transport curl-segments --url URL --payload FILE
//       sends the multipart body as segments: head and tail from memory, FILE read in place
//   courier-transport-bench requests --transport urlsession|curl --url URL --count N
//       N sequential GETs (URL + "/r/<i>"), one transport, so one kept-alive connection
import CourierCurl
import CourierURLSession
import Foundation

struct Options {
  var command = ""
  var transport = ""
  var url: URL?
  var body: URL?
  var payload: URL?
  var count = 1000
  var boundary = "courier-bench-boundary-7d1f0a"
}

func usage(_ message: String) -> Never {
  FileHandle.standardError.write(Data("courier-transport-bench: \(message)\n".utf8))
  exit(64)
}

func parse(_ arguments: [String]) -> Options {
  var options = Options()
  var rest = arguments[...]
  guard let command = rest.popFirst(), ["upload", "requests"].contains(command) else {
    usage("first argument: upload or requests")
  }
  options.command = command
  while let flag = rest.popFirst() {
    guard let value = rest.popFirst() else { usage("\(flag) needs a value") }
    switch flag {
    case "--transport": options.transport = value
    case "--url": options.url = URL(string: value)
    case "--body": options.body = URL(fileURLWithPath: value)
    case "--payload": options.payload = URL(fileURLWithPath: value)
    case "--count":
      guard let count = Int(value), count > 0 else { usage("--count: a positive number") }
      options.count = count
    case "--boundary": options.boundary = value
    default: usage("unknown flag \(flag)")
    }
  }
  guard ["urlsession", "curl", "curl-segments"].contains(options.transport) else {
    usage("--transport: urlsession, curl or curl-segments")
  }
  guard options.url != nil else { usage("--url is required") }
  return options
}

func makeTransport(_ name: String) -> any Transport {
  name == "urlsession" ? URLSessionTransport() : CurlTransport()
}

func inSeconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func report(_ fields: [String: String]) {
  let text = fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
    .joined(separator: ",")
  print("{\(text)}")
}

func upload(_ options: Options, url: URL) async throws {
  let headers: HTTPFields = [.contentType: "multipart/form-data; boundary=\(options.boundary)"]
  let request = HTTPRequest(
    method: .post, url: url.appendingPathComponent("upload"), headerFields: headers)
  let noDeadline = TransportOptions(deadline: nil)
  let start = ContinuousClock.now
  let response: HTTPResponse
  let received: ResponseBody
  let bytes: Int64
  if options.transport == "curl-segments" {
    guard let payload = options.payload else { usage("--payload is required") }
    let size = (try FileManager.default.attributesOfItem(atPath: payload.path)[.size] as? Int) ?? 0
    let head = Data(
      ("--\(options.boundary)\r\nContent-Disposition: form-data; name=\"file\"; "
        + "filename=\"\(payload.lastPathComponent)\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    let tail = Data("\r\n--\(options.boundary)--\r\n".utf8)
    let segments: [BodySegment] = [
      .bytes(head), .file(payload, offset: 0, length: Int64(size)), .bytes(tail),
    ]
    bytes = RequestBody.segments(segments).length ?? 0
    (response, received) = try await CurlTransport().send(
      request, body: .segments(segments), options: noDeadline)
  } else {
    guard let body = options.body else { usage("--body is required") }
    bytes = Int64((try FileManager.default.attributesOfItem(atPath: body.path)[.size] as? Int) ?? 0)
    (response, received) = try await makeTransport(options.transport).send(
      request, body: .file(body), options: noDeadline)
  }
  let seconds = inSeconds(start.duration(to: .now))
  report([
    "status": "\(response.status.code)", "bytes": "\(bytes)",
    "seconds": String(format: "%.6f", seconds),
    "received": received.bytes.isEmpty ? "null" : String(decoding: received.bytes, as: UTF8.self),
  ])
  if response.status != 200 { exit(1) }
}

func requests(_ options: Options, url: URL) async throws {
  let transport = makeTransport(options.transport)
  var failures = 0
  let start = ContinuousClock.now
  for index in 0..<options.count {
    let (response, _) = try await transport.send(
      HTTPRequest(method: .get, url: url.appendingPathComponent("r/\(index)")), body: nil,
      options: TransportOptions(deadline: .seconds(30)))
    if response.status != 200 { failures += 1 }
  }
  let seconds = inSeconds(start.duration(to: .now))
  report([
    "count": "\(options.count)", "failures": "\(failures)",
    "seconds": String(format: "%.6f", seconds),
  ])
  if failures > 0 { exit(1) }
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
do {
  guard let url = options.url else { usage("--url is required") }
  if options.command == "upload" {
    try await upload(options, url: url)
  } else {
    try await requests(options, url: url)
  }
} catch {
  FileHandle.standardError.write(Data("courier-transport-bench: \(error)\n".utf8))
  exit(1)
}
