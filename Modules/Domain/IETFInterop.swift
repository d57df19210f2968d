import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An interop version of the IETF resumable uploads draft (`Upload-Draft-Interop-Version`),
/// and what it changes in the client's requests and in how answers are read (decisions 2701,
/// 2707): 3 (draft -01, URLSession since iOS 17) to 8 (-09 and later), 8 by default.
///
/// | interop | completeness field | append type | `Upload-Limit` | gone | `?0` append |
/// |---|---|---|---|---|---|
/// | 3 | `Upload-Incomplete` (inverted; absent = complete) | any | none | 404 | 201 |
/// | 4, 5 | `Upload-Complete` | any | none | 404 | 201 |
/// | 6 | `Upload-Complete` | `application/partial-upload` | `expires` | 404 | 201 |
/// | 7 | `Upload-Complete` | `application/partial-upload` | `max-age` | 410 | 204 |
/// | 8 | `Upload-Complete` | `application/partial-upload` | `max-age`, on `OPTIONS` too | 410 | 204 |
package struct IETFInterop: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The version's number.
  package let number: Int

  /// The versions Courier speaks.
  package static let spoken: ClosedRange<Int> = 3...8
  /// The version sent unless another is configured or negotiated: the draft's current one.
  package static let current = IETFInterop(unchecked: 8)

  /// The version `number`, when Courier speaks it.
  /// - Parameter number: the interop version.
  package init?(_ number: Int) {
    guard Self.spoken.contains(number) else { return nil }
    self.number = number
  }

  private init(unchecked number: Int) { self.number = number }

  /// The version as its field's value.
  package var description: String { String(number) }

  /// Orders versions by number.
  /// - Parameters:
  ///   - lhs: a version.
  ///   - rhs: another.
  /// - Returns: true when `lhs` is older.
  package static func < (lhs: IETFInterop, rhs: IETFInterop) -> Bool { lhs.number < rhs.number }

  /// The version a saved record names; records saved before versions were kept speak 8.
  /// - Parameter number: the saved number, if any.
  /// - Returns: the version (8 for nil or a number Courier does not speak).
  package static func saved(_ number: Int?) -> IETFInterop {
    number.flatMap(IETFInterop.init) ?? current
  }

  /// The completeness field of a request, in this version's name: `Upload-Complete: ?1|?0`, or
  /// at interop 3 `Upload-Incomplete` with the inverse value (sent explicitly, as servers
  /// built on -01 recognise a creation by it).
  /// - Parameter complete: whether the content ends the representation.
  /// - Returns: the field.
  package func completeness(_ complete: Bool) -> HTTPField {
    number == 3
      ? HTTPField(name: .uploadIncomplete, value: complete ? "?0" : "?1")
      : HTTPField(name: .uploadComplete, value: complete ? "?1" : "?0")
  }

  /// What an answer says of the upload's completeness, in this version's field; at interop 3
  /// a missing `Upload-Incomplete` means complete, as -01 says.
  /// - Parameter response: the answer.
  /// - Returns: true or false; nil when the field is absent or not an sf-boolean (from 4).
  package func isComplete(_ response: HTTPResponse) -> Bool? {
    guard number == 3 else { return Self.boolean(response.headerFields[.uploadComplete]) }
    guard let field = response.headerFields[.uploadIncomplete] else { return true }
    return Self.boolean(field).map { !$0 }
  }

  /// Whether an answer carries this version's completeness field (the draft's answer, not a
  /// plain one).
  /// - Parameter response: the answer.
  /// - Returns: true when it names completeness.
  package func namesCompleteness(_ response: HTTPResponse) -> Bool {
    Self.boolean(response.headerFields[number == 3 ? .uploadIncomplete : .uploadComplete]) != nil
  }

  /// The `Content-Type` of an append: `application/partial-upload` from interop 6 (required);
  /// before, any type: `application/octet-stream`.
  package var appendType: String {
    number >= 6 ? IETFUpload.partialUploadType : "application/octet-stream"
  }

  /// Whether answers carry `Upload-Limit` (from interop 6).
  package var namesLimits: Bool { number >= 6 }

  /// The `Upload-Limit` member that says how long an unfinished upload lives: `expires` at 6,
  /// `max-age` from 7; nil before 6.
  package var lifetimeMember: String? { number < 6 ? nil : number == 6 ? "expires" : "max-age" }

  /// The status of an upload that is gone (cancelled, expired): 404 up to 6, 410 from 7.
  package var goneStatus: Int { number <= 6 ? 404 : 410 }

  /// The success status of an append that does not complete the upload: 201 up to 6, 204
  /// from 7.
  package var incompleteAppendStatus: Int { number <= 6 ? 201 : 204 }

  /// Whether the target's `OPTIONS` must say `Accept-Patch: application/partial-upload`
  /// (from 8).
  package var optionsNameAcceptPatch: Bool { number >= 8 }

  private static func boolean(_ text: String?) -> Bool? {
    switch text?.trimmingSpacesAndTabs() {
    case "?1": return true
    case "?0": return false
    default: return nil
    }
  }
}
