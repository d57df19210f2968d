// A fleet of clients against a server of fixed capacity, on a virtual clock (discrete events,
// no real sleeping), the way the AWS architecture blog's "Exponential Backoff And Jitter"
// simulation reports it: total calls and completion time per strategy.
//
// Each client has one write to deliver and never drops it (it is in the outbox). The server
// answers 503 to everything during an outage of OUTAGE seconds at the start, then serves
// CAPACITY requests per virtual second, the rest get 503. Two servers of that capacity:
//   window  at most CAPACITY per fixed one-second window, however they arrive (bursts are free);
//   bucket  a token bucket filled at CAPACITY per second holding at most CAPACITY/10 (a burst
//           beyond 100 ms of capacity is shed, as a server with a short queue does).
// Responses are instantaneous. With RETRY_AFTER > 0 every 503 carries `Retry-After: RETRY_AFTER`.
// Strategies:
//   courier      the real decisions: `RetryPolicy.decide` per request with one `RetryBudget` per
//                client, then, when the request gives up, `ReplayBackoff` before the next replay
//                (what `SyncEngine.watch()` does), with the defaults of decision 2410 (equal
//                jitter; 2 s ×2 for requests, 2 s ×2 up to 25 s for replays);
//   courier-0413 the same two layers as they were before decision 2410, written out here:
//                full jitter, 0.5 s ×2 for requests, 1 s ×2 up to 5 min for replays;
//   exponential  Courier's two layers without jitter (every draw 1) and without a budget;
//   fixed        no backoff, no jitter: the next try a fixed 1 s after every failure.
// Usage: fleet-sim [CLIENTS=10000] [CAPACITY=250] [OUTAGE=60] [SEED=1] [RETRY_AFTER=0]
import CourierDomain

/// SplitMix64: a small deterministic generator, so every run with a seed is the same.
struct SplitMix64 {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// A uniform draw in `0..<1`.
  mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// A binary min-heap of events (time, then insertion order for ties).
struct EventQueue {
  struct Event {
    let time: Double
    let order: Int
    let client: Int
  }
  private var heap: [Event] = []
  private var counter = 0
  var isEmpty: Bool { heap.isEmpty }

  mutating func push(_ time: Double, _ client: Int) {
    counter += 1
    heap.append(Event(time: time, order: counter, client: client))
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard less(heap[child], heap[parent]) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  mutating func pop() -> Event? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
      if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return top
  }

  private func less(_ a: Event, _ b: Event) -> Bool {
    a.time < b.time || (a.time == b.time && a.order < b.order)
  }
}

enum Strategy: String, CaseIterable {
  case courier, courier0413 = "courier-0413", exponential, fixed
}

enum ServerModel: String, CaseIterable {
  case window, bucket
}

/// One client's retry state.
struct Client {
  var attempt = 0  // attempts of the current request (replay), 0 before its first
  var requestStart = 0.0  // when the current request's first attempt was made
  var failedReplays = 0
  var budget = RetryBudget()
  var done = false
}

struct Result {
  var calls = 0
  var callsDuringOutage = 0
  var completion = 0.0
  var medianFinish = 0.0
  var peakPerSecond = 0
}

/// Courier's two layers before decision 2410: full jitter (a wait anywhere below the ceiling),
/// requests 4 attempts at 0.5 s ×2 up to 20 s within 60 s, replays 1 s ×2 up to 5 min.
func courier0413(
  attempt: Int, elapsed: Double, failedReplays: Int, retryAfter: Double?, draw: Double,
  budgetAllows: Bool
) -> (wait: Double, gaveUp: Bool) {
  var wait = min(20, 0.5 * Double(1 << min(attempt - 1, 30))) * draw
  if let retryAfter { wait = max(wait, retryAfter) }
  if attempt < 4 && elapsed + wait < 60 && budgetAllows { return (wait, false) }
  let ceiling = min(300, Double(1 << min(failedReplays, 30)))
  return (max(ceiling * draw, retryAfter ?? 0), true)
}

func simulate(
  _ strategy: Strategy, server: ServerModel, clients count: Int, capacity: Int, outage: Double,
  seed: UInt64, retryAfter: Int
) -> Result {
  let policy = RetryPolicy()
  let backoff = ReplayBackoff()
  let jittered = strategy == .courier || strategy == .courier0413
  let burst = max(1, Double(capacity) / 10)
  var tokens = burst
  var refilledAt = outage
  let busy = CourierError(
    .overloaded, status: 503, retryAfter: retryAfter > 0 ? .seconds(retryAfter) : nil)
  var random = SplitMix64(state: seed)
  var clients = [Client](repeating: Client(), count: count)
  var queue = EventQueue()
  for index in 0..<count { queue.push(0, index) }
  var served: [Int: Int] = [:]  // window → requests answered 2xx
  var arrivals: [Int: Int] = [:]  // window → requests received
  var finishes: [Double] = []
  var result = Result()

  func draw() -> Double { jittered ? random.unit() : 1 }

  while let event = queue.pop() {
    let now = event.time
    var client = clients[event.client]
    if client.attempt == 0 { client.requestStart = now }
    client.attempt += 1
    result.calls += 1
    let window = Int(now.rounded(.down))
    arrivals[window, default: 0] += 1
    if now < outage { result.callsDuringOutage += 1 }
    var accepted = false
    if now >= outage {
      switch server {
      case .window:
        accepted = served[window, default: 0] < capacity
        if accepted { served[window, default: 0] += 1 }
      case .bucket:
        tokens = min(burst, tokens + (now - refilledAt) * Double(capacity))
        refilledAt = now
        accepted = tokens >= 1
        if accepted { tokens -= 1 }
      }
    }
    if accepted {
      client.budget.recordSuccess()
      client.done = true
      finishes.append(now)
      clients[event.client] = client
      continue
    }
    let next: Double
    switch strategy {
    case .fixed:
      next = 1
    case .courier0413:
      client.budget.recordFailure()
      let (wait, gaveUp) = courier0413(
        attempt: client.attempt, elapsed: now - client.requestStart,
        failedReplays: client.failedReplays + 1, retryAfter: busy.retryAfter?.seconds,
        draw: draw(), budgetAllows: client.budget.allowsRetry)
      if gaveUp {
        client.failedReplays += 1
        client.attempt = 0
      }
      next = wait
    case .courier, .exponential:
      client.budget.recordFailure()
      let decision = policy.decide(
        after: busy, attempt: client.attempt, elapsed: .seconds(now - client.requestStart),
        safeToRepeat: true, jitter: draw(),
        budgetAllows: jittered ? client.budget.allowsRetry : true)
      switch decision {
      case .retry(let wait):
        next = wait.seconds
      case .giveUp:
        // The replay stopped on a transient failure: the watch replays after its backoff.
        client.failedReplays += 1
        client.attempt = 0
        next =
          backoff.delay(
            afterFailures: client.failedReplays, retryAfter: busy.retryAfter, jitter: draw()
          )
          .seconds
      }
    }
    clients[event.client] = client
    queue.push(now + next, event.client)
  }
  finishes.sort()
  result.completion = finishes.last ?? 0
  result.medianFinish = finishes.isEmpty ? 0 : finishes[finishes.count / 2]
  result.peakPerSecond = arrivals.values.max() ?? 0
  return result
}

let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
func argument(_ index: Int, _ fallback: Int) -> Int {
  index < arguments.count ? (arguments[index] ?? fallback) : fallback
}
let clients = argument(0, 10_000)
let capacity = argument(1, 250)
let outage = Double(argument(2, 60))
let seed = UInt64(argument(3, 1))
let retryAfter = argument(4, 0)

func format(_ value: Double) -> String {
  let tenths = Int((value * 10).rounded())
  return "\(tenths / 10).\(tenths % 10)"
}

print(
  "fleet-sim: \(clients) clients, one write each; capacity \(capacity) requests per virtual "
    + "second; outage \(Int(outage)) s; seed \(seed)"
    + (retryAfter > 0 ? "; every 503 with Retry-After: \(retryAfter)" : ""))
print(
  "| server | strategy | total calls | calls per write | calls during outage | per client "
    + "| peak calls in 1 s | peak ÷ clients | median write done (s) | completion (s) "
    + "| drain after recovery (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for server in ServerModel.allCases {
  for strategy in Strategy.allCases {
    let result = simulate(
      strategy, server: server, clients: clients, capacity: capacity, outage: outage, seed: seed,
      retryAfter: retryAfter)
    let perWrite = Double(result.calls) / Double(max(1, clients))
    print(
      "| \(server.rawValue) | \(strategy.rawValue) | \(result.calls) | \(format(perWrite)) | "
        + "\(result.callsDuringOutage) | \(format(Double(result.callsDuringOutage) / Double(max(1, clients)))) "
        + "| \(result.peakPerSecond) | \(format(Double(result.peakPerSecond) / Double(max(1, clients))))× "
        + "| \(format(result.medianFinish)) | \(format(result.completion)) "
        + "| \(format(result.completion - outage)) |")
  }
}
