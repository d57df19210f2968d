import CourierDomain

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The exit codes of `courier`, from sysexits(3).
package enum ExitCode: Int32, Sendable {
  /// Success.
  case success = 0
  /// A failure with no better code.
  case failure = 1
  /// EX_USAGE: the command line was wrong.
  case usage = 64
  /// EX_DATAERR: the server refused the request for a business reason.
  case businessRefusal = 65
  /// EX_NOINPUT: an input file is missing or unreadable.
  case missingInput = 66
  /// EX_UNAVAILABLE: offline, or the host cannot be reached.
  case unavailable = 69
  /// EX_SOFTWARE: an unexpected local failure.
  case software = 70
  /// EX_CANTCREAT: a local file or folder (the data directory, the store) could not be created.
  case cannotCreate = 73
  /// EX_IOERR: the local store could not be read or written (damaged, full, newer schema).
  case ioError = 74
  /// EX_TEMPFAIL: a transient failure that outlasted the retries.
  case transient = 75
  /// EX_PROTOCOL: the server's reply made no sense.
  case protocolError = 76
  /// EX_NOPERM: not logged in, or the session expired.
  case unauthorized = 77
  /// EX_CONFIG: the configuration is wrong.
  case config = 78
  /// Interrupted by the user (128 + SIGINT).
  case interrupted = 130
  /// Ended by SIGTERM (128 + 15): what a shell reports for a process the signal killed, and
  /// what a command that caught it to clean up exits with (decision 2424).
  case terminated = 143

  /// The code a command ends with after catching a terminating signal and cleaning up: 128 plus
  /// the signal's number, as a shell reports a process the signal killed (130 for SIGINT, 143
  /// for SIGTERM).
  /// - Parameter signal: the signal caught.
  /// - Returns: the code.
  package static func afterSignal(_ signal: Int32) -> ExitCode {
    signal == SIGTERM ? .terminated : .interrupted
  }

  /// The exit code for a failure.
  /// - Parameter error: the failure.
  /// - Returns: the code.
  package static func forError(_ error: CourierError) -> ExitCode {
    // Credentials refused for plain http: the configuration must change (decision 2431).
    if error.code == InsecureHTTP.code { return .config }
    switch error.kind.code {
    case .business, .conflict, .invalidInput: return .businessRefusal
    case .fileUnavailable: return .missingInput
    case .offline, .cannotReachHost, .dns, .tls, .notTheServer: return .unavailable
    case .timedOut, .connectionLost, .server, .overloaded: return .transient
    case .invalidResponse, .decoding: return .protocolError
    case .unauthorized: return .unauthorized
    case .cancelled: return .interrupted
    case .localStore:
      switch error.code {
      case "store_cannotCreate": return .cannotCreate
      // Another process holds the store past the wait: trying again later will work.
      case "store_busy": return .transient
      default: return .ioError
      }
    case .unexpected: return .software
    }
  }
}
