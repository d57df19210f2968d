import CourierDBus

extension DBusPathFacts {
  /// The source `path_facts` asks for, or nil for `none` (the bus is never opened).
  /// - Parameter setting: the configured value.
  /// - Returns: the source.
  static func configured(_ setting: CourierConfig.PathFactsSetting) -> DBusPathFacts? {
    switch setting {
    case .auto: DBusPathFacts(services: .any)
    case .networkmanager: DBusPathFacts(services: .networkManager)
    case .networkd: DBusPathFacts(services: .networkd)
    case .none: nil
    }
  }
}
