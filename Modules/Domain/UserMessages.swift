import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The sentences shown to a person for each kind of failure. One table, so that every app
/// says the same thing and none shows a raw code.
package enum UserMessages {
  /// The message for an error.
  /// - Parameter error: the error.
  /// - Returns: a plain sentence for a person.
  package static func message(for error: CourierError) -> String {
    switch error.kind.code {
    case .offline:
      return "You're offline. Your changes are kept and will be sent when the network is back."
    case .timedOut:
      return "The server took too long to answer. Please try again."
    case .cannotReachHost:
      return "The server can't be reached right now. Check the address or try again later."
    case .dns:
      return "The server's address couldn't be found. Check the address and your connection."
    case .tls:
      return tlsMessage(code: error.code)
    case .connectionLost:
      return "The connection was lost before the server answered. Please try again."
    case .server:
      return "The server ran into a problem. Please try again in a moment."
    case .overloaded:
      if error.code == "idempotency_in_flight" {
        return "The server is still working on this same request. Please wait a moment."
      }
      if let wait = error.retryAfter, wait > .zero {
        return "The server is busy. Please try again in \(formatWait(wait))."
      }
      return "The server is busy. Please try again in a moment."
    case .unauthorized:
      if error.code == "invalid_credentials" { return "Wrong username or password." }
      return error.serverMessage.map { "\($0). Please log in again." }
        ?? "Your session has expired. Please log in again."
    case .business:
      if let message = error.serverMessage { return message }
      switch error.status {
      case 404: return "This item doesn't exist (any more) on the server."
      case 413: return "This file is too large for the server."
      case 428: return "The server needs to know which version you edited."
      case 409: return "This item already exists on the server."
      default: return "The server refused the request."
      }
    case .conflict:
      return error.serverMessage
        ?? "This item was changed elsewhere since you last saw it."
    case .invalidResponse:
      // A resumable upload's impossible offset says what was stopped and why (decision 1301);
      // a record nested too deep says which (decision 2428).
      // A download's file that fails its check says what was done with it (decision 2501).
      if error.code?.hasPrefix("tus_") == true || error.code == "record_too_deep"
        || error.code?.hasPrefix("download_") == true,
        let message = error.serverMessage
      {
        return message
      }
      if error.code == "reply_too_deep" || error.code == "list_too_deep" {
        return "The server sent JSON nested deeper than \(JSONValue.maximumDepth) levels, more "
          + "than Courier reads; nothing of it was kept."
      }
      // The head came, the body stopped short of its length (decision 2436).
      if error.isTruncatedReply { return "The server's reply was cut short before its end." }
      if error.code == "reply_content_range_mismatch" {
        return "The server sent a part of the file that does not continue what was downloaded; "
          + "nothing of it was kept."
      }
      return "The server sent a reply that couldn't be understood."
    case .decoding:
      return "The server's reply couldn't be read."
    case .cancelled:
      return "Cancelled."
    case .invalidInput:
      return error.serverMessage ?? "The request couldn't be sent as given."
    case .fileUnavailable:
      return error.serverMessage ?? "The file couldn't be read."
    case .notTheServer:
      return "The network answered, but not your server: a Wi-Fi login page? "
        + "Nothing was lost: your changes are kept and will be sent when your server answers."
    case .localStore:
      return error.serverMessage
        ?? "Courier's local data couldn't be read or written. Check the data folder."
    case .unexpected:
      return "Something unexpected went wrong in Courier. Nothing was lost; please try again."
    }
  }

  /// The message for a failed request that was sent directly, with nothing queued (an upload
  /// without `--queue`, a `get`, a login): the sentence of ``message(for:)`` without its
  /// promise that the changes are kept and will be sent, which would be untrue (decision 2422).
  /// - Parameter error: the error.
  /// - Returns: a plain sentence for a person.
  package static func message(forDirect error: CourierError) -> String {
    if error.kind == .offline {
      return "You're offline. Nothing was sent; try again when the network is back."
    }
    if error.kind == .notTheServer {
      return "The network answered, but not your server: a Wi-Fi login page? Nothing was sent "
        + "and nothing is kept to send later; try again once the network lets you through."
    }
    return message(for: error)
  }

  /// The sentence for a TLS failure, by its code (`TLSFailureCode`): what went wrong and which
  /// setting changes it (decision 2430). Pins and trust failures are never retried.
  /// - Parameter code: the error's code.
  /// - Returns: a plain sentence for a person.
  static func tlsMessage(code: String?) -> String {
    switch code {
    case TLSFailureCode.pinMismatch:
      return "The server's public key matches none of the pinned keys (pinned_public_keys), so "
        + "this may not be your server: nothing was sent. If the server's key was changed, "
        + "update the pins."
    case TLSFailureCode.untrusted:
      return "The server's certificate isn't trusted: it is signed by an authority this "
        + "machine doesn't trust, has expired, or is for another name. For a server with a "
        + "private certificate authority, set ca_bundle (--ca-bundle, COURIER_CA_BUNDLE)."
    case TLSFailureCode.clientCertificate:
      return "The client certificate couldn't be used, or the server refused it: check "
        + "client_certificate and client_key."
    case TLSFailureCode.caBundle:
      return "The CA bundle (ca_bundle) couldn't be read as PEM certificates."
    default:
      return "A secure connection to the server couldn't be established."
    }
  }

  /// A wait for a person: "3 seconds", "2 minutes".
  /// - Parameter wait: the duration.
  /// - Returns: the text.
  package static func formatWait(_ wait: Duration) -> String {
    let seconds = Int(
      (Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        .rounded(.up))
    if seconds < 90 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
    let minutes = (seconds + 59) / 60
    return "\(minutes) minutes"
  }
}
