import CourierDomain
import CourierLinux
import Foundation
import Testing

/// `path_facts` and `constrained_interfaces` through the config layers (decision 2602).
@Suite("Path facts configuration")
struct PathFactsConfigTests {
  func load(environment: [String: String] = [:], file: String? = nil) throws -> CourierConfig {
    try ConfigLoader.load(
      flags: file == nil ? [:] : ["config": "/c.json"],
      environment: ["HOME": "/home/u"].merging(environment) { $1 }
    ) { path in
      path == "/c.json" ? file.map { Data($0.utf8) } : nil
    }
  }

  @Test("auto and no rule by default; the file, then the environment, set them")
  func layers() throws {
    let defaults = try load()
    #expect(defaults.pathFacts == .auto)
    #expect(defaults.constrainedRule.entries.isEmpty)
    let file = #"{"path_facts":"networkd","constrained_interfaces":"wwan0, usb*"}"#
    let fromFile = try load(file: file)
    #expect(fromFile.pathFacts == .networkd)
    #expect(fromFile.constrainedRule.entries == ["wwan0", "usb*"])
    let fromEnvironment = try load(
      environment: ["COURIER_PATH_FACTS": "none", "COURIER_CONSTRAINED_INTERFACES": "gsm"],
      file: file)
    #expect(fromEnvironment.pathFacts == .none)
    #expect(fromEnvironment.constrainedRule.entries == ["gsm"])
  }

  @Test("a bad value is refused naming its source, the key and what is known")
  func refused() {
    do {
      _ = try load(environment: ["COURIER_PATH_FACTS": "dbus"])
      Issue.record("accepted")
    } catch let error as ConfigError {
      #expect(error.key == "path_facts")
      #expect(error.message.contains("auto, networkmanager, networkd, none"), "\(error)")
    } catch {
      Issue.record("\(error)")
    }
    do {
      _ = try load(file: #"{"constrained_interfaces":"wwan0,,usb*"}"#)
      Issue.record("accepted")
    } catch let error as ConfigError {
      #expect(error.key == "constrained_interfaces")
      #expect(error.message.contains("empty entry"), "\(error)")
    } catch {
      Issue.record("\(error)")
    }
  }
}
