// The start-up peer: a Swift program that imports Foundation, prints a line and exits. Built
// by run.sh with -static-stdlib (and dynamically, for reference).
import Foundation

print("hello from \(ProcessInfo.processInfo.processIdentifier)")
