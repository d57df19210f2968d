// The Swift peer of an offline write: fsync-peer.c written as a Swift tool is written (it
// imports Foundation, as the start-up peer hello.swift does), built by run.sh with
// -static-stdlib: start, append 256 bytes to a file, fdatasync it, exit.
//
//   fsync-peer-swift FILE
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 2 else { exit(64) }
let fd = open(arguments[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
guard fd >= 0 else { exit(74) }
var record = [UInt8](repeating: UInt8(ascii: "x"), count: 256)
record[255] = UInt8(ascii: "\n")
let written = record.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
guard written == 256, fdatasync(fd) == 0 else { exit(74) }
exit(close(fd) == 0 ? 0 : 74)
