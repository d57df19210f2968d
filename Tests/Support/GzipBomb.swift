import Foundation

/// A gzip bomb for transport tests: a small compressed body that inflates to a huge one.
public enum GzipBomb {
  /// One mebibyte of zeros, deflated and ended with a full flush: byte-aligned, independent of
  /// what came before, so any number of copies in a row is one valid deflate stream.
  static let mebibyteOfZeros: Data = {
    var block = Data([
      0xEC, 0xC1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xC2, 0xA0, 0xF5, 0x4F, 0x6D, 0x08, 0x5F, 0xA0,
    ])
    block.append(Data(count: 1016))
    block.append(contentsOf: [0x3E, 0x03, 0x00, 0x00, 0xFF, 0xFF])
    return block
  }()

  /// A gzip body that inflates to `mebibytes` MiB of zeros (about 1 KiB per MiB compressed).
  /// It has no trailer: a client that stops at its limit never needs one.
  /// - Parameter mebibytes: the inflated size in MiB.
  /// - Returns: the compressed bytes.
  public static func body(mebibytes: Int) -> Data {
    var data = Data([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03])
    data.reserveCapacity(10 + mebibytes * mebibyteOfZeros.count)
    for _ in 0..<mebibytes { data.append(mebibyteOfZeros) }
    return data
  }

  /// A whole HTTP/1.1 response carrying the bomb (`Content-Encoding: gzip`, closed at the end).
  /// - Parameter mebibytes: the inflated size in MiB.
  /// - Returns: the response's bytes.
  public static func response(mebibytes: Int) -> Data {
    let body = body(mebibytes: mebibytes)
    let head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
      + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    return Data(head.utf8) + body
  }

  /// Waits until a condition holds, checking every 10 ms, for at most `bound`.
  /// - Parameters:
  ///   - bound: the longest wait.
  ///   - condition: the condition.
  /// - Returns: whether it held.
  public static func wait(atMost bound: Duration, until condition: () -> Bool) async -> Bool {
    let end = ContinuousClock.now + bound
    while ContinuousClock.now < end {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
  }
}
