import CourierCLI
import Foundation

let environment = ProcessInfo.processInfo.environment
let runner = CommandRunner(
  environment: environment, output: StandardOutput(environment: environment))
let code = await runner.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
