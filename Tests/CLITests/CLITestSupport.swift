import CourierCLITestSupport

// CourierSessionTests and CourierSessionLoggingTests use these without importing
// CourierCLITestSupport (they are being changed on another branch); the aliases keep them
// building until that branch lands and they import it themselves.
typealias CapturedOutput = CourierCLITestSupport.CapturedOutput
typealias InProcessCLI = CourierCLITestSupport.InProcessCLI
