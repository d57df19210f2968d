import CourierDomain
import Foundation
import Testing

/// The identity of a resumable upload's bytes (decision 1303), as tables: when a file's times
/// cannot vouch for it, when a saved record resumes, and when the bytes must be hashed.
@Suite("ResumableUpload")
struct ResumableUploadTests {
  static let second: Int64 = 1_000_000_000
  /// A file last changed at 1,700,000,000.123456789 s.
  static let file = ResumableUpload.FileIdentity(
    device: 2049, inode: 77, size: 1_000, modified: 1_700_000_000 * second + 123_456_789,
    changed: 1_700_000_000 * second + 123_456_789)
  /// The same file on a file system without fractions of seconds.
  static let coarse = ResumableUpload.FileIdentity(
    device: 2049, inode: 77, size: 1_000, modified: 1_700_000_000 * second,
    changed: 1_700_000_000 * second)

  static let racyRows: [(String, ResumableUpload.FileIdentity, Int64, Bool)] = [
    ("looked at a minute after the last change", file, file.changed + 60 * second, false),
    ("looked at 150 ms after", file, file.changed + 150_000_000, false),
    (
      "looked at 50 ms after: the same tick could hold a later write", file,
      file.changed + 50_000_000, true
    ),
    ("looked at in the same instant", file, file.changed, true),
    (
      "changed after the look (a clock ahead, a write meanwhile)", file, file.changed - second,
      true
    ),
    ("whole seconds: looked at 1.5 s after", coarse, coarse.changed + 1_500_000_000, true),
    ("whole seconds: looked at 3 s after", coarse, coarse.changed + 3 * second, false),
  ]

  @Test("a file's times vouch for it only when they are older than a tick", arguments: racyRows)
  func racy(
    _ name: String, _ identity: ResumableUpload.FileIdentity, _ checkedAt: Int64,
    _ expected: Bool
  ) {
    #expect(identity.isRacy(checkedAt: checkedAt) == expected, "\(name)")
  }

  static func record(
    identity: ResumableUpload.FileIdentity? = file, sha256: String = "",
    modified: Int64? = nil, length: Int64 = 1_000
  ) -> ResumableUpload {
    ResumableUpload(
      endpoint: "http://h/uploads", file: "/v.mp4", fileSize: 1_000,
      fileModified: modified ?? file.modified, sha256: sha256, length: length,
      idempotencyKey: "k", uploadURL: "http://h/uploads/1", confirmedOffset: 400,
      fileIdentity: identity)
  }

  static func changed(
    _ change: (inout ResumableUpload.FileIdentity) -> Void
  ) -> ResumableUpload.FileIdentity {
    var identity = file
    change(&identity)
    return identity
  }

  static let resumeRows: [(String, ResumableUpload, ResumableUpload, Bool)] = [
    ("the same file, untouched: resumes without a hash", record(), record(), true),
    (
      "rewritten in place, same size, modification time put back: the change time differs",
      record(), record(identity: changed { $0.changed += 5 * second }), false
    ),
    (
      "replaced by a copy (another inode), same size and times",
      record(), record(identity: changed { $0.inode = 78 }), false
    ),
    (
      "another device (the folder now on another disk)", record(),
      record(identity: changed { $0.device = 2050 }), false
    ),
    (
      "touched: another modification time", record(modified: file.modified + 1),
      record(), false
    ),
    ("another length", record(), record(length: 999), false),
    (
      "a racy record kept its hash: the same identity and hash resume",
      record(sha256: "aa"), record(sha256: "aa"), true
    ),
    (
      "a racy record kept its hash: the same identity, other bytes",
      record(sha256: "aa"), record(sha256: "bb"), false
    ),
    (
      "a racy record kept its hash: no hash now is no proof",
      record(sha256: "aa"), record(), false
    ),
    (
      "a saved identity, a hash now only because this look is racy: resumes", record(),
      record(sha256: "cc"), true
    ),
    (
      "compressed bytes: no identity, the same hash", record(identity: nil, sha256: "dd"),
      record(identity: nil, sha256: "dd"), true
    ),
    (
      "compressed bytes: another hash (the original was edited)",
      record(identity: nil, sha256: "dd"), record(identity: nil, sha256: "ee"), false
    ),
    (
      "a record from before identities, with its hash, resumes on the hash",
      record(identity: nil, sha256: "ff"), record(sha256: "ff"), true
    ),
    (
      "a record from before identities, with its hash, other bytes",
      record(identity: nil, sha256: "ff"), record(sha256: "00"), false
    ),
    (
      "compressed then, sent as is now (no hash to compare)",
      record(identity: nil, sha256: "dd"), record(), false
    ),
    (
      "sent as is then (no hash), compressed now", record(),
      record(identity: nil, sha256: "dd"), false
    ),
    (
      "a queued upload's own copy: neither identity nor hash, the entry vouches",
      record(identity: nil), record(identity: nil), true
    ),
  ]

  @Test("a saved record resumes only the same bytes", arguments: resumeRows)
  func resumes(
    _ name: String, _ saved: ResumableUpload, _ fresh: ResumableUpload, _ expected: Bool
  ) {
    #expect(saved.resumes(fresh) == expected, "\(name)")
  }

  static let old = file.changed + 60 * second
  static let digestRows:
    [(String, Bool, ResumableUpload.FileIdentity?, Int64, ResumableUpload?, Bool)] = [
      ("a file sent as it is, old enough, nothing saved: no hash", false, file, old, nil, false),
      ("the same, its saved record has no hash: no hash", false, file, old, record(), false),
      ("compressed bytes: always hashed", true, nil, old, nil, true),
      ("no identity (stat failed): hashed", false, nil, old, nil, true),
      ("changed 10 ms before the look: hashed", false, file, file.changed + 10_000_000, nil, true),
      (
        "the saved record is vouched for by its hash: hashed to compare", false, file, old,
        record(sha256: "aa"), true
      ),
      (
        "the saved record has a hash but another identity: starts over, no hash", false,
        changed { $0.changed += second }, old + second, record(sha256: "aa"), false
      ),
      (
        "a saved record from before identities, with its hash: hashed to compare", false, file,
        old, record(identity: nil, sha256: "ff"), true
      ),
    ]

  @Test("the bytes are hashed only when nothing else can tell them", arguments: digestRows)
  func needsDigest(
    _ name: String, _ derived: Bool, _ identity: ResumableUpload.FileIdentity?,
    _ checkedAt: Int64, _ saved: ResumableUpload?, _ expected: Bool
  ) {
    #expect(
      ResumableUpload.needsDigest(
        derived: derived, identity: identity, checkedAt: checkedAt, saved: saved) == expected,
      "\(name)")
  }

  @Test("an identity survives the record's JSON; a record without one still decodes")
  func codable() throws {
    let saved = Self.record(sha256: "aa")
    let data = try JSONEncoder().encode(saved)
    #expect(try JSONDecoder().decode(ResumableUpload.self, from: data) == saved)
    let before =
      #"{"endpoint":"e","file":"/f","fileSize":3,"fileModified":4,"sha256":"ab","#
      + #""length":3,"idempotencyKey":"k","confirmedOffset":0}"#
    let decoded = try JSONDecoder().decode(ResumableUpload.self, from: Data(before.utf8))
    #expect(decoded.fileIdentity == nil)
    #expect(decoded.sha256 == "ab")
  }
}
