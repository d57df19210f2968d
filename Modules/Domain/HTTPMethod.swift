#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The method's token, upper case (`GET`).
  public let rawValue: String

  /// Creates a method from its token.
  /// - Parameter rawValue: the method token; it is upper-cased.
  public init(rawValue: String) { self.rawValue = rawValue.uppercased() }

  /// `GET`: reads a resource; safe and idempotent, so safe to retry.
  public static let get = HTTPMethod(rawValue: "GET")
  /// `HEAD`: a `GET` without the body; safe and idempotent.
  public static let head = HTTPMethod(rawValue: "HEAD")
  /// `POST`: creates or acts; safe to retry only under an `Idempotency-Key`.
  public static let post = HTTPMethod(rawValue: "POST")
  /// `PUT`: replaces a resource; idempotent.
  public static let put = HTTPMethod(rawValue: "PUT")
  /// `PATCH`: changes part of a resource; safe to retry only under an `Idempotency-Key`.
  public static let patch = HTTPMethod(rawValue: "PATCH")
  /// `DELETE`: removes a resource; idempotent.
  public static let delete = HTTPMethod(rawValue: "DELETE")
  /// `OPTIONS`: asks what a resource allows; safe and idempotent.
  public static let options = HTTPMethod(rawValue: "OPTIONS")

  /// Whether RFC 9110 defines the method as idempotent: sending it twice has the effect of once.
  public var isIdempotent: Bool {
    switch rawValue {
    case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
    default: return false
    }
  }

  /// The method token.
  public var description: String { rawValue }
}
