// MARK: - UserConfig

/// A user declared in a database's `users` section of the configuration file.
///
/// ```json
/// "users": {"user1": {"password": "pass", "admin_channels": ["user1"], "admin_roles": ["moderator"]}}
/// ```
///
/// The password is a secret: `description`, `debugDescription` and reflection (`dump`) never show it.
/// Spec: gateway-rest-api.md §17.2; sync-function.md for channels and roles.
public struct UserConfig: Sendable, Equatable {
    // MARK: - Properties

    /// The user name (the key in `users`); `GUEST` configures the anonymous user.
    public var name: String

    /// The plain-text password from the file, if any. Never printed.
    public var password: String?

    /// Channels granted by the administrator (`admin_channels`).
    public var adminChannels: [String]

    /// Roles granted by the administrator (`admin_roles`).
    public var adminRoles: [String]

    /// The user's email address (`email`).
    public var email: String?

    /// Whether the user is disabled (`disabled`); a disabled GUEST means authentication is required.
    public var disabled: Bool

    /// Whether this is the anonymous user, `GUEST`.
    public var isGuest: Bool { name == "GUEST" }

    // MARK: - Initialiser

    /// Creates a user configuration.
    public init(
        name: String,
        password: String? = nil,
        adminChannels: [String] = [],
        adminRoles: [String] = [],
        email: String? = nil,
        disabled: Bool = false
    ) {
        self.name = name
        self.password = password
        self.adminChannels = adminChannels
        self.adminRoles = adminRoles
        self.email = email
        self.disabled = disabled
    }

    // MARK: - Parsing

    /// The keys a user object may hold; `name`, `all_channels` and `roles` are read-only outputs of the REST API
    /// that Sync Gateway tolerates in input.
    static let knownKeys: Set<String> = [
        "name", "password", "admin_channels", "admin_roles", "email", "disabled", "all_channels", "roles",
    ]

    /// Reads a user from its configuration object.
    init(name: String, object: ConfigObject, warnings: inout [String]) throws(GatewayError) {
        self.init(
            name: name,
            password: try object.string("password"),
            adminChannels: try object.stringArray("admin_channels") ?? [],
            adminRoles: try object.stringArray("admin_roles") ?? [],
            email: try object.string("email"),
            disabled: try object.bool("disabled") ?? false
        )
        for key in object.unknownKeys(known: Self.knownKeys) {
            warnings.append("\(object.fieldPath(key)): unknown key ignored")
        }
    }
}

// MARK: - Redacted descriptions

extension UserConfig: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description with the password redacted.
    public var description: String {
        var parts = ["name: \"\(name)\""]
        parts.append("password: \(password == nil ? "nil" : "<redacted>")")
        parts.append("admin_channels: \(adminChannels)")
        parts.append("admin_roles: \(adminRoles)")
        if let email { parts.append("email: \"\(email)\"") }
        if disabled { parts.append("disabled: true") }
        return "UserConfig(\(parts.joined(separator: ", ")))"
    }

    /// Same as ``description``: the password is redacted.
    public var debugDescription: String { description }

    /// A mirror without the password, so that `dump` and default descriptions of containing types stay redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name,
                "password": password == nil ? "nil" : "<redacted>",
                "adminChannels": adminChannels,
                "adminRoles": adminRoles,
                "email": email as Any,
                "disabled": disabled,
            ],
            displayStyle: .struct
        )
    }
}
