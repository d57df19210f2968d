#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// SHA-256 (FIPS 180-4) in pure Swift, fed in pieces so a file of any size is hashed with a
/// small buffer: Linux has no CryptoKit. Used for tus `Upload-Checksum` and for a resumable
/// upload's file identity.
package struct SHA256: Sendable {
  private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
    0x5be0_cd19
  )
  private var pending: [UInt8] = []
  private var length: UInt64 = 0

  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
    0xab1c_5ed5, 0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe,
    0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f,
    0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da, 0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
    0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc,
    0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b,
    0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070, 0x19a4_c116,
    0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
    0xc671_78f2,
  ]

  /// A hash of nothing yet.
  package init() {}

  /// The digest of `data` in one call.
  /// - Parameter data: the bytes.
  /// - Returns: the 32-byte digest.
  package static func hash(_ data: Data) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(data)
    return hasher.finalize()
  }

  /// Adds bytes to the hash.
  /// - Parameter data: the next bytes.
  package mutating func update(_ data: Data) {
    data.withUnsafeBytes { update($0) }
  }

  /// Adds bytes to the hash, straight from a buffer.
  /// - Parameter bytes: the next bytes.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length &+= UInt64(bytes.count)
    var index = 0
    if !pending.isEmpty {
      let take = min(64 - pending.count, bytes.count)
      pending.append(contentsOf: bytes[0..<take])
      index = take
      if pending.count == 64 {
        let block = pending
        pending.removeAll(keepingCapacity: true)
        block.withUnsafeBytes { compress($0, at: 0) }
      }
    }
    while bytes.count - index >= 64 {
      compress(bytes, at: index)
      index += 64
    }
    if index < bytes.count { pending.append(contentsOf: bytes[index...]) }
  }

  /// Ends the hash.
  /// - Returns: the 32-byte digest.
  package mutating func finalize() -> [UInt8] {
    let bitLength = length &* 8
    var tail: [UInt8] = [0x80]
    let used = (pending.count + 1) % 64
    tail += [UInt8](repeating: 0, count: used <= 56 ? 56 - used : 120 - used)
    for shift in stride(from: 56, through: 0, by: -8) {
      tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    let savedLength = length
    tail.withUnsafeBytes { update($0) }
    length = savedLength
    let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
    return words.flatMap { word in
      [
        UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16),
        UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
      ]
    }
  }

  /// Lower-case hexadecimal digits of a digest.
  /// - Parameter digest: the digest.
  /// - Returns: two digits per byte.
  package static func hex(_ digest: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(digest.count * 2)
    for byte in digest {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  private mutating func compress(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
    guard let base = bytes.baseAddress else { return }
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
      guard let words = w.baseAddress else { return }
      Self.k.withUnsafeBufferPointer { k in
        guard let constants = k.baseAddress else { return }
        Self.rounds(&state, block: base + offset, words: words, constants: constants)
      }
    }
  }

  /// One block's 64 rounds, on raw pointers with no closure or helper call inside: an
  /// unoptimised (debug) build hashes 1.6 times as fast as with them, which the resumable
  /// upload tests feel (20 MiB: 16.9 s → 10.3 s).
  private static func rounds(
    _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
    block: UnsafeRawPointer, words w: UnsafeMutablePointer<UInt32>,
    constants k: UnsafePointer<UInt32>
  ) {
    for i in 0..<16 {
      let b = block + i * 4
      w[i] =
        UInt32(b.load(as: UInt8.self)) << 24 | UInt32((b + 1).load(as: UInt8.self)) << 16
        | UInt32((b + 2).load(as: UInt8.self)) << 8 | UInt32((b + 3).load(as: UInt8.self))
    }
    for i in 16..<64 {
      let x = w[i - 15]
      let y = w[i - 2]
      let s0 = (x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)
      let s1 = (y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)
      w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = state
    for i in 0..<64 {
      let s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)
      let choice = (e & f) ^ (~e & g)
      let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
      let s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)
      let majority = (a & b) ^ (a & c) ^ (b & c)
      let t2 = s0 &+ majority
      h = g
      g = f
      f = e
      e = d &+ t1
      d = c
      c = b
      b = a
      a = t1 &+ t2
    }
    state = (
      state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f,
      state.6 &+ g, state.7 &+ h
    )
  }
}
