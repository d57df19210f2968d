#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Home folders from the password database, through the reentrant lookups with a buffer of each
/// call's own: `getpwnam` and `getpwuid` return a buffer shared by every thread (Foundation's
/// `expandingTildeInPath` and `NSHomeDirectory()` use it too), which another thread's lookup can
/// overwrite while it is read.
package enum PasswordDatabase {
  /// A user's home folder, or nil for an unknown user or an empty entry.
  /// - Parameter user: the user's name.
  /// - Returns: the folder, or nil.
  package static func home(ofUser user: String) -> String? {
    lookup { entry, buffer, size, found in getpwnam_r(user, &entry, buffer, size, &found) }
  }

  /// The home folder of the user with this id, or nil when the database has none.
  /// - Parameter uid: the user id.
  /// - Returns: the folder, or nil.
  package static func home(ofUID uid: uid_t) -> String? {
    lookup { entry, buffer, size, found in getpwuid_r(uid, &entry, buffer, size, &found) }
  }

  private static func lookup(
    _ call: (
      inout passwd, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<passwd>?
    ) -> Int32
  ) -> String? {
    var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
    // An entry larger than the suggested size gets ERANGE: retry with more room, up to 1 MiB.
    while size <= 1 << 20 {
      let result = withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) {
        buffer -> (status: Int32, home: String?) in
        guard let base = buffer.baseAddress else { return (ENOMEM, nil) }
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        let status = call(&entry, base, size, &found)
        guard status == 0, found != nil, let directory = entry.pw_dir else { return (status, nil) }
        let home = String(cString: directory)
        return (0, home.isEmpty ? nil : home)
      }
      guard result.status == ERANGE else { return result.home }
      size *= 4
    }
    return nil
  }
}
