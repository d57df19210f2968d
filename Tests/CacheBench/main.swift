// cache-bench: the measurements behind Docs/benchmarks/cache.md, run by Benchmarks/cache/run.sh
// (which starts the reference backend and a byte-counting relay in front of it).
//
//   cache-bench BASE_URL TOKEN DATA_DIR MODE N
//
// MODE: `plain` (the pipeline without the cache: every call fetches the whole reply), `hit`
// (the caching pipeline, the stored reply fresh: no request), `revalidate` (the caching
// pipeline with `Cache-Control: no-cache`: every call is a conditional GET answered 304).
// Each mode first makes one call to warm up (connection, store), then N calls to GET
// /articles; it prints one JSON line: mode, calls, wall and CPU microseconds per call, and the
// body bytes the caller received.
import CourierCore
import CourierDomain
import CourierLinux
import Foundation
import HTTPTypes

func cpuMicroseconds() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

func main() async throws {
  let arguments = CommandLine.arguments
  guard arguments.count == 6, let base = URL(string: arguments[1]), let calls = Int(arguments[5])
  else {
    FileHandle.standardError.write(
      Data("usage: cache-bench BASE_URL TOKEN DATA_DIR plain|hit|revalidate N\n".utf8))
    exit(64)
  }
  let mode = arguments[4]
  var config = CourierConfig(environment: ["HOME": arguments[3]])
  config.baseURL = base
  config.token = arguments[2]
  config.dataDirectory = URL(fileURLWithPath: arguments[3], isDirectory: true)
  config.pathMonitor = .manual
  config.transport = .curl
  let environment = try CourierEnvironment(config: config)
  let client: APIClient
  switch mode {
  case "plain":
    client = environment.client
  case "hit", "revalidate":
    let cache = try environment.openResponseCache()
    // The clock stands still: a stored reply stays within its max-age for a `hit` run.
    let now = Date()
    client = environment.client(
      caching: CachingMiddleware(
        store: cache, partition: { environment.responseCachePartition }, now: { now }))
  default:
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(64)
  }
  var request = try client.request(.get, "/articles")
  if mode == "revalidate" { request.headerFields[.cacheControl] = "no-cache" }
  let warm = try await client.exchange(request)
  var received = 0
  let cpu = cpuMicroseconds()
  let start = ContinuousClock.now
  for _ in 0..<calls {
    let reply = try await client.exchange(request)
    received += reply.body.bytes.count
    if mode != "plain", reply.response.headerFields[.courierCache] == nil {
      FileHandle.standardError.write(Data("\(mode): a call was not answered by the cache\n".utf8))
      exit(1)
    }
  }
  let elapsed = ContinuousClock.now - start
  let wall =
    Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
  let perCall = { (value: Double) in String(format: "%.1f", value / Double(calls)) }
  print(
    #"{"mode":"\#(mode)","calls":\#(calls),"body_bytes_per_call":\#(warm.body.bytes.count),"#
      + #""wall_us_per_call":\#(perCall(wall)),"cpu_us_per_call":\#(perCall(cpuMicroseconds() - cpu)),"#
      + #""received_body_bytes":\#(received)}"#)
}

try await main()
