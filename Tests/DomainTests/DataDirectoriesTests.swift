import CourierDomain
import Foundation
import Testing

@Suite("DataDirectories")
struct DataDirectoriesTests {
  struct Row: Sendable, CustomStringConvertible {
    var environment: [String: String]
    var data: String
    var cache: String
    var description: String { "\(environment)" }
  }

  static let table: [Row] = [
    Row(
      environment: ["HOME": "/home/ana"], data: "/home/ana/.local/share/courier",
      cache: "/home/ana/.cache/courier"),
    Row(
      environment: ["HOME": "/home/ana/"], data: "/home/ana/.local/share/courier",
      cache: "/home/ana/.cache/courier"),
    Row(
      environment: [
        "HOME": "/home/ana", "XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/fast/cache/",
      ],
      data: "/data/courier", cache: "/fast/cache/courier"),
    Row(
      environment: ["HOME": "/home/ana", "XDG_DATA_HOME": "relative/dir", "XDG_CACHE_HOME": ""],
      data: "/home/ana/.local/share/courier", cache: "/home/ana/.cache/courier"),
    Row(
      environment: ["XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/c"], data: "/d/courier",
      cache: "/c/courier"),
    Row(environment: ["HOME": "/"], data: "/.local/share/courier", cache: "/.cache/courier"),
  ]

  @Test("XDG variables win when absolute; HOME gives the defaults", arguments: table)
  func resolve(row: Row) throws {
    let directories = try DataDirectories.resolve(environment: row.environment)
    #expect(directories == DataDirectories(data: row.data, cache: row.cache))
  }

  @Test(
    "no usable HOME and no XDG variable is a clear error", arguments: [[:], ["HOME": "relative"]])
  func noHome(environment: [String: String]) {
    #expect {
      try DataDirectories.resolve(environment: environment)
    } throws: { error in
      (error as? StoreError)?.message.contains("XDG_DATA_HOME") == true
    }
  }
}
