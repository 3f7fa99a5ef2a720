// MARK: - RoleConfig

/// A role declared in a database's `roles` section of the configuration file.
///
/// ```json
/// "roles": {"moderator": {"admin_channels": ["moderators"]}, "admin": {}}
/// ```
///
/// Spec: gateway-rest-api.md §17.2.
public struct RoleConfig: Sendable, Equatable, CustomStringConvertible {
    // MARK: - Properties

    /// The role name (the key in `roles`).
    public var name: String

    /// Channels granted to every member of the role (`admin_channels`).
    public var adminChannels: [String]

    // MARK: - Initialiser

    /// Creates a role configuration.
    public init(name: String, adminChannels: [String] = []) {
        self.name = name
        self.adminChannels = adminChannels
    }

    // MARK: - Parsing

    /// The keys a role object may hold; `admin_roles` and `all_channels` are accepted and ignored as in Sync Gateway.
    static let knownKeys: Set<String> = ["name", "admin_channels", "all_channels", "admin_roles"]

    /// Reads a role from its configuration object.
    init(name: String, object: ConfigObject, warnings: inout [String]) throws(GatewayError) {
        self.init(name: name, adminChannels: try object.stringArray("admin_channels") ?? [])
        for key in object.unknownKeys(known: Self.knownKeys) {
            warnings.append("\(object.fieldPath(key)): unknown key ignored")
        }
    }

    // MARK: - Description

    /// `RoleConfig(name: "moderator", admin_channels: [...])`.
    public var description: String {
        "RoleConfig(name: \"\(name)\", admin_channels: \(adminChannels))"
    }
}
