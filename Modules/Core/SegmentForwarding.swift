import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// A decorator that conforms to `SegmentedBodyTransport` but can stream segments only when the
/// transport it wraps can. Callers ask `SegmentStreaming.streamer(for:)` rather than casting,
/// so a decorated adapter without the capability is not mistaken for one that has it.
public protocol SegmentForwarding: SegmentedBodyTransport {
  /// Whether a segmented upload reaches a transport that streams it.
  var forwardsSegments: Bool { get }
}

/// Finds out whether a (possibly decorated) transport streams segmented bodies.
public enum SegmentStreaming {
  /// The transport as a segment streamer, when it and everything it wraps can stream.
  /// - Parameter transport: the transport, decorated or not.
  /// - Returns: the streamer, or nil when the body must go through a file.
  public static func streamer(for transport: any Transport) -> (any SegmentedBodyTransport)? {
    if let forwarding = transport as? any SegmentForwarding {
      return forwarding.forwardsSegments ? forwarding : nil
    }
    return transport as? any SegmentedBodyTransport
  }

  /// The streamer beneath a decorator, for an upload it was asked to stream.
  /// - Parameters:
  ///   - base: the transport the decorator wraps.
  ///   - request: the request, named in the error.
  /// - Returns: the streamer.
  /// - Throws: `invalidInput` (`segments_unsupported`) when `base` cannot stream segments.
  static func required(
    beneath base: any Transport, for request: HTTPRequest
  ) throws(CourierError) -> any SegmentedBodyTransport {
    guard let streamer = streamer(for: base) else { throw unsupported(request) }
    return streamer
  }

  /// The error a decorator throws when asked to stream segments its base cannot stream.
  /// - Parameter request: the request.
  /// - Returns: the error.
  static func unsupported(_ request: HTTPRequest) -> CourierError {
    CourierError(
      .invalidInput, code: "segments_unsupported",
      serverMessage: "This transport can't stream a body in segments; send it from a file.",
      context: request.summary)
  }
}
