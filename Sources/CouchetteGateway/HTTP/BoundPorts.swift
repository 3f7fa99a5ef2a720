// MARK: - BoundPorts

/// The TCP ports a running gateway is listening on; useful when the configuration asked for port 0.
///
/// ```swift
/// try await server.run { ports in
///     print("public on \(ports.publicPort), admin on \(ports.adminPort)")
/// }
/// ```
public struct BoundPorts: Sendable, Hashable, CustomStringConvertible {
    /// The public listener's port.
    public var publicPort: Int

    /// The admin listener's port.
    public var adminPort: Int

    /// Creates a pair of ports.
    public init(publicPort: Int, adminPort: Int) {
        self.publicPort = publicPort
        self.adminPort = adminPort
    }

    /// The port of one listener.
    public func port(for listener: GatewayListener) -> Int {
        switch listener {
        case .public: publicPort
        case .admin: adminPort
        }
    }

    /// `public: 4984, admin: 4985`.
    public var description: String {
        "public: \(publicPort), admin: \(adminPort)"
    }
}
