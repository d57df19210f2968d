// A transport driven from its own process, so that a test can measure what it alone costs
// (its peak resident size) while the rest of the test suite runs beside it in the test process.
//
//   courier-transport-probe get curl|urlsession URL GO_FILE
//
// Sends one GET to URL with the named adapter's defaults and prints one line: `response
// STATUS BYTES`, or `error KIND UNDERLYING`. Then it waits until GO_FILE exists (the test
// creates it once the server saw the connection closed: a transfer that went on after the
// answer would still be counted), and prints `peak BYTES` (`VmHWM`) and exits 0.
import CourierCurl
import CourierDomain
import CourierPorts
import CourierURLSession
import Foundation
import HTTPTypes

let arguments = CommandLine.arguments
guard arguments.count == 5, arguments[1] == "get", let url = URL(string: arguments[3]) else {
  FileHandle.standardError.write(
    Data("usage: courier-transport-probe get curl|urlsession URL GO_FILE\n".utf8))
  exit(64)
}
let transport: any Transport
switch arguments[2] {
case "curl": transport = CurlTransport()
case "urlsession": transport = URLSessionTransport()
default:
  FileHandle.standardError.write(Data("unknown transport \(arguments[2])\n".utf8))
  exit(64)
}
do {
  let (response, body) = try await transport.send(
    HTTPRequest(method: .get, url: url), options: TransportOptions(deadline: .seconds(60)))
  print("response \(response.status.code) \(body.bytes.count)")
} catch let error as CourierError {
  print("error \(error.kind) \(error.underlying ?? "")")
} catch {
  print("error other \(error)")
}
fflush(nil)
let deadline = ContinuousClock.now + .seconds(300)
while !FileManager.default.fileExists(atPath: arguments[4]), ContinuousClock.now < deadline {
  try await Task.sleep(for: .milliseconds(10))
}
let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
print("peak \((Int(line.filter(\.isNumber)) ?? 0) * 1024)")
fflush(nil)
exit(0)
