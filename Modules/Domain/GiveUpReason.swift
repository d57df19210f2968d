/// Why a retry decision gave up.
package enum GiveUpReason: String, Sendable, Equatable, Codable {
  /// The failure is not transient (a business 4xx, 401, a conflict, bad input).
  case notTransient
  /// The request may have reached the server and is not safe to repeat.
  case notSafeToRepeat
  /// Every allowed attempt was made.
  case attemptsExhausted
  /// The next wait would end past the overall deadline.
  case deadlineExceeded
  /// The server asked to wait longer than the policy accepts.
  case retryAfterTooLong
  /// The client's shared retry budget is spent: too many failures across requests.
  case budgetExhausted
  /// Something on the network answered instead of the server (a Wi-Fi login page, a redirect
  /// elsewhere): it will not go away within seconds, so the request is kept for later rather
  /// than repeated now (decision 0414).
  case notTheServer
}
