// MARK: - GatewayListener

/// The two HTTP listeners of a gateway (spec: gateway-rest-api.md §1.1).
public enum GatewayListener: String, Sendable, Hashable, CaseIterable {
    /// The public port (default `:4984`): users authenticate, reads are channel-filtered.
    case `public`
    /// The admin port (default `127.0.0.1:4985`): no authentication, full privileges.
    case admin
}
