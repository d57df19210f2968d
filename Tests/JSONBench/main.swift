// json-bench: what a large list refresh pays for JSON (Docs/benchmarks/json.md). Run through
// Benchmarks/json/run.sh, which builds it in release mode; it uses only what the parser and the
// store's writer have always offered (`JSONValue(parsing:)`, `jsonText`, `==`), so the same file
// measures a checkout from before a change to them.
//
//   json-bench [MEGABYTES] [RUNS]   a list of records of about MEGABYTES (5), RUNS times (7)
//
// Each run: parse the list (what `CollectionReader` does with a 200), write every record with
// `jsonText` (what the SQLite store writes per record), parse each written record back and
// compare it with the parsed one (what a read of the store and a merge's comparison do). Prints
// one JSON line: the list's size, and each step's median and fastest wall time and CPU time of
// its thread, in ms.
import CourierDomain
import Foundation

/// A step's wall time and the CPU time of the thread that ran it, in ms: on a machine shared
/// with other work the CPU time moves less.
struct Timing {
  var wall: Double
  var cpu: Double
}

func threadCPU() -> Double {
  var spec = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
  return Double(spec.tv_sec) * 1e3 + Double(spec.tv_nsec) / 1e6
}

func measure(_ work: () throws -> Void) rethrows -> Timing {
  let cpu = threadCPU()
  let start = ContinuousClock.now
  try work()
  let elapsed = ContinuousClock.now - start
  return Timing(
    wall: Double(elapsed.components.seconds) * 1e3
      + Double(elapsed.components.attoseconds) / 1e15,
    cpu: threadCPU() - cpu)
}

/// A list like the reference backend's, with the numbers and nesting a declared collection's
/// records carry: integers (some beyond 2^53), fractions, strings with escapes, a tag list and
/// a small nested object. Deterministic: record `n` is the same in every build.
func listText(megabytes: Int) -> String {
  var text = "["
  var n = 0
  while text.utf8.count < megabytes * 1_000_000 {
    if n > 0 { text += "," }
    text +=
      #"{"id":"rec-\#(n)","version":\#(n % 17 + 1),"updated_at":"2026-01-0\#(n % 9 + 1)T12:00:00.000Z","#
    text += #""title":"Record \#(n) \"quoted\" é","body":"Line one\nline two of record \#(n)","#
    text +=
      #""count":\#(n * 7919),"big":\#(9_007_199_254_740_993 + n),"price":\#(n % 1000).\#(n % 100),"#
    text +=
      #""ratio":0.\#(n % 97 + 1)e-3,"done":\#(n % 2 == 0),"tags":["a\#(n % 5)","b","c\#(n % 3)"],"#
    text += #""meta":{"depth":{"level":[1,2,{"leaf":\#(n)}]},"note":null}}"#
    n += 1
  }
  return text + "]"
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let megabytes = arguments.first ?? 5
let runs = arguments.dropFirst().first ?? 7
let data = Data(listText(megabytes: megabytes).utf8)
var parse: [Timing] = []
var write: [Timing] = []
var readBack: [Timing] = []
var records = 0
for _ in 0..<runs {
  var list = JSONValue.null
  parse.append(try measure { list = try JSONValue(parsing: data) })
  guard case .array(let items) = list else { fatalError("the list did not parse as an array") }
  records = items.count
  var texts: [String] = []
  texts.reserveCapacity(items.count)
  write.append(measure { for item in items { texts.append(item.jsonText) } })
  readBack.append(
    try measure {
      for (item, text) in zip(items, texts) where try JSONValue(parsing: text) != item {
        fatalError("a record changed through jsonText → parse")
      }
    })
}

func summary(_ times: [Timing]) -> String {
  func ms(_ value: Double) -> Double { (value * 10).rounded() / 10 }
  let wall = times.map(\.wall).sorted()
  let cpu = times.map(\.cpu).sorted()
  return #"{"wall_median_ms":\#(ms(wall[wall.count / 2])),"wall_min_ms":\#(ms(wall[0])),"#
    + #""cpu_median_ms":\#(ms(cpu[cpu.count / 2])),"cpu_min_ms":\#(ms(cpu[0]))}"#
}

print(
  #"{"bytes":\#(data.count),"records":\#(records),"runs":\#(runs),"parse":\#(summary(parse)),"#
    + #""write":\#(summary(write)),"read_back_and_compare":\#(summary(readBack))}"#)
