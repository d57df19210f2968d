// courier-netlink-probe: runs NetlinkPathMonitor for the benchmarks in Benchmarks/netlink.
//   watch [NETNS]                 print each published path as JSON
import CourierDomain
import CourierNetlink
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "watch":
  let namespace = arguments.count > 1 ? "/var/run/netns/\(arguments[1])" : nil
  let monitor = NetlinkPathMonitor(options: .init(namespacePath: namespace))
  let task = Task { try await monitor.run() }
  for await path in monitor.updates() {
    print(PathReport.json(path, at: Date()))
    print(PathReport.details(path))
  }
  _ = task
default:
  FileHandle.standardError.write(Data("usage: courier-netlink-probe watch [NETNS]\n".utf8))
  exit(64)
}
