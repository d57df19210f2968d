// Compiled into every fuzz target by scripts/fuzz.

/// Stops the run when an invariant breaks, saying which: unlike `precondition`, `fatalError`
/// keeps its message in an optimised build, so the fuzzer's log names the broken promise.
/// - Parameters:
///   - condition: the invariant.
///   - message: what broke.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
  if !condition { fatalError("fuzz invariant: \(message())") }
}
