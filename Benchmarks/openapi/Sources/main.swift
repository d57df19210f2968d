// courier-openapi-bench: the same call, GET /articles/{id} with its JSON decoded into a value
// (a `date-time` field included), through a client generated from Backend/openapi.json over
// CourierOpenAPI and through Courier's own APIClient, in interleaved rounds in one process, one
// session and one pipeline (libcurl), against one reference backend (Benchmarks/openapi/run.sh,
// Docs/benchmarks/openapi.md). Prints a Markdown table and a JSON line.
//
//   courier-openapi-bench --url URL [--requests 10000] [--rounds 10] [--backend-pid PID]
//
// --requests is per side; each round runs requests/rounds calls of one side, then of the
// other, the first side alternating. CPU is this process's (getrusage), and the backend's
// (/proc/PID/stat) when its pid is given.
import CourierLinux
import CourierMemory
import CourierOpenAPI
import Foundation
import OpenAPIRuntime

/// The article as a program on APIClient would decode it: the same fields as the generated
/// `Components.Schemas.Article`, the time parsed the way the runtime's transcoder does.
struct Article: Decodable {
  let id: String
  let title: String
  let body: String
  let version: Int
  let updatedAt: Date

  enum CodingKeys: String, CodingKey {
    case id, title, body, version, updatedAt = "updated_at"
  }
}

struct Options {
  var url: URL?
  var requests = 10_000
  var rounds = 10
  var backendPID: Int32?
  /// One side only, for a profiler: "openapi" or "apiclient".
  var only: String?
}

func usage(_ message: String) -> Never {
  FileHandle.standardError.write(Data("courier-openapi-bench: \(message)\n".utf8))
  exit(64)
}

func parse(_ arguments: [String]) -> Options {
  var options = Options()
  var rest = arguments[...]
  while let flag = rest.popFirst() {
    guard let value = rest.popFirst() else { usage("\(flag) needs a value") }
    switch flag {
    case "--url": options.url = URL(string: value)
    case "--requests": options.requests = Int(value) ?? 0
    case "--rounds": options.rounds = Int(value) ?? 0
    case "--backend-pid": options.backendPID = Int32(value)
    case "--only": options.only = value
    default: usage("unknown flag \(flag)")
    }
  }
  guard options.url != nil else { usage("--url is required") }
  guard options.requests > 0, options.rounds > 0, options.requests % options.rounds == 0 else {
    usage("--requests must be a positive multiple of --rounds")
  }
  return options
}

/// CPU seconds (user + system) this process has used.
func processCPU() -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// CPU seconds (user + system) a process has used, from /proc; 0 when it cannot be read.
func processCPU(pid: Int32?) -> Double {
  guard let pid,
    let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = text.lastIndex(of: ")")
  else { return 0 }
  // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
  let fields = text[text.index(after: close)...].split(separator: " ")
  guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
    return 0
  }
  return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// What one side used over all its rounds.
struct Totals {
  var wall: Duration = .zero
  var cpu = 0.0
  var backendCPU = 0.0
  var calls = 0

  static func += (total: inout Totals, part: Totals) {
    total.wall += part.wall
    total.cpu += part.cpu
    total.backendCPU += part.backendCPU
    total.calls += part.calls
  }
}

/// Logs in, makes the article, runs both sides.
/// - Returns: the totals of the generated client's side and of APIClient's.
func measure(_ options: Options, url: URL) async throws -> (openAPI: Totals, apiClient: Totals) {
  let data = FileManager.default.temporaryDirectory
    .appendingPathComponent("courier-openapi-bench-\(getpid())")
  defer { try? FileManager.default.removeItem(at: data) }
  // No path monitor or store of the system's: the calls need neither.
  var config = CourierConfig(environment: ProcessInfo.processInfo.environment)
  config.baseURL = url
  config.dataDirectory = data
  let session = try CourierSession(
    config: config,
    overrides: AdapterOverrides(
      pathMonitor: ManualPathMonitor(), localStore: InMemoryLocalStore()))
  try await session.login(username: "alice", password: "secret")
  let api = session.environment.client
  let id = UUID().uuidString.lowercased()
  _ = try await api.send(
    .post, "/articles",
    json: ["id": id, "title": "Benchmark", "body": String(repeating: "Lorem ipsum. ", count: 20)])

  let client = Client(
    serverURL: url, configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds),
    transport: CourierClientTransport(api))
  let decoder = JSONDecoder()
  decoder.dateDecodingStrategy = .custom { decoder in
    let text = try decoder.singleValueContainer().decode(String.self)
    return try Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }

  /// One call through the generated client.
  func viaOpenAPI() async throws {
    let article = try await client.getArticle(path: .init(articleId: id)).ok.body.json
    guard article.id == id, article.version == 1 else { throw WrongArticle() }
  }

  /// The same call through APIClient, decoded by hand.
  func viaAPIClient() async throws {
    let (_, body) = try await api.send(.get, "/articles/\(id)")
    let article = try decoder.decode(Article.self, from: body.bytes)
    guard article.id == id, article.version == 1 else { throw WrongArticle() }
  }

  func run(_ count: Int, _ call: () async throws -> Void) async throws -> Totals {
    let cpu = processCPU()
    let backend = processCPU(pid: options.backendPID)
    let start = ContinuousClock.now
    for _ in 0..<count { try await call() }
    return Totals(
      wall: start.duration(to: .now), cpu: processCPU() - cpu,
      backendCPU: processCPU(pid: options.backendPID) - backend, calls: count)
  }

  // Warm-up: connections, the token, the first decodes.
  _ = try await run(200, viaOpenAPI)
  _ = try await run(200, viaAPIClient)

  var openAPI = Totals()
  var apiClient = Totals()
  let perRound = options.requests / options.rounds
  for round in 0..<options.rounds {
    if options.only == "openapi" {
      openAPI += try await run(perRound, viaOpenAPI)
    } else if options.only == "apiclient" {
      apiClient += try await run(perRound, viaAPIClient)
    } else if round.isMultiple(of: 2) {
      openAPI += try await run(perRound, viaOpenAPI)
      apiClient += try await run(perRound, viaAPIClient)
    } else {
      apiClient += try await run(perRound, viaAPIClient)
      openAPI += try await run(perRound, viaOpenAPI)
    }
  }
  return (openAPI, apiClient)
}

struct WrongArticle: Error {}

func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func row(_ name: String, _ totals: Totals) -> String {
  let wall = seconds(totals.wall)
  let calls = Double(totals.calls)
  return "| \(name) | \(totals.calls) | "
    + String(
      format: "%.2f | %.0f | %.0f | %.2f | %.0f | %.2f |", wall, calls / wall,
      wall / calls * 1e6, totals.cpu, totals.cpu / calls * 1e6, totals.backendCPU)
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
guard let url = options.url else { usage("--url is required") }
let (openAPI, apiClient) = try await measure(options, url: url)
print(
  "| path | calls | wall s | calls/s | µs/call | client CPU s | client CPU µs/call | backend CPU s |"
)
print("|---|---|---|---|---|---|---|---|")
print(row("generated client → CourierClientTransport", openAPI))
print(row("APIClient + JSONDecoder", apiClient))
let wallRatio = seconds(openAPI.wall) / seconds(apiClient.wall)
let cpuRatio = openAPI.cpu / apiClient.cpu
print()
print(
  String(
    format: "ratio (CourierOpenAPI ÷ APIClient): wall %.3f×, client CPU %.3f×", wallRatio, cpuRatio)
)
print(
  String(
    format:
      "{\"wall_ratio\":%.4f,\"cpu_ratio\":%.4f,\"openapi_wall_s\":%.3f,\"apiclient_wall_s\":%.3f,"
      + "\"openapi_cpu_s\":%.3f,\"apiclient_cpu_s\":%.3f,\"rounds\":%d,\"calls_per_side\":%d}",
    wallRatio, cpuRatio, seconds(openAPI.wall), seconds(apiClient.wall), openAPI.cpu,
    apiClient.cpu, options.rounds, openAPI.calls))
