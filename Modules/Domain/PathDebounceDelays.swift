/// How long a new path must hold before it is published (see decision record 0201).
public struct PathDebounceDelays: Sendable, Hashable {
  /// The wait before publishing a satisfied path: short, so replays start quickly, but long
  /// enough to skip a link that comes up and falls again at once.
  package var online: Duration
  /// The wait before publishing anything else (unsatisfied, unknown, requiresConnection):
  /// longer, because a roaming or DHCP renewal removes the default route for a moment, and
  /// reporting "offline" late costs nothing since requests are never blocked.
  package var offline: Duration

  /// Creates delays.
  /// - Parameters:
  ///   - online: the wait before publishing a satisfied path.
  ///   - offline: the wait before publishing any other path.
  package init(online: Duration, offline: Duration) {
    self.online = online
    self.offline = offline
  }

  /// 300 ms online, 2 s offline.
  public static let standard = PathDebounceDelays(
    online: .milliseconds(300), offline: .seconds(2))
}
