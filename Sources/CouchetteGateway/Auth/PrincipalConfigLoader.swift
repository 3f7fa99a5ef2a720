// MARK: - PrincipalConfigLoader

/// Applies a database configuration's `users` and `roles` to a ``PrincipalStore`` when the database starts.
///
/// Sync Gateway's semantics (spec: gateway-rest-api.md §17.2):
/// - roles are created or updated (`admin_channels` replaced, document grants kept);
/// - users are created only if absent, so changes made through the admin API survive restarts;
/// - `GUEST` is re-applied at every start (its administrator fields replaced, document grants kept); it never has
///   a password.
///
/// ```swift
/// try PrincipalConfigLoader(hasher: PasswordHasher()).apply(databaseConfig, to: store)
/// ```
public struct PrincipalConfigLoader: Sendable {
    // MARK: - Properties

    /// Hashes configured passwords.
    public let hasher: any PasswordHashing

    // MARK: - Initialiser

    /// Creates a loader.
    public init(hasher: any PasswordHashing = PasswordHasher()) {
        self.hasher = hasher
    }

    // MARK: - Applying

    /// Applies the users and roles of `config` to `store`.
    ///
    /// - Parameters:
    ///   - config: The database configuration.
    ///   - store: The store to update.
    ///   - sequences: Allocates a database sequence for each principal created or changed (run-time
    ///     configuration changes, spec: sync-function.md §8.1); `nil` at start-up, where configured principals
    ///     keep sequence 0 (their grants count as made at sequence 1 and never backfill).
    /// - Throws: 400 ``GatewayError/invalidConfig(field:problem:)`` naming the field (e.g.
    ///   `databases.todo.users.user1.password`) for invalid names, illegal channel names, or a new user without a
    ///   usable password when `allow_empty_password` is off; store errors as they are.
    public func apply(
        _ config: DatabaseConfig, to store: any PrincipalStore,
        sequences: (() throws(GatewayError) -> UInt64)? = nil
    ) throws(GatewayError) {
        try apply(
            users: config.users,
            roles: config.roles,
            allowEmptyPassword: config.allowEmptyPassword,
            fieldPrefix: "databases.\(config.name)",
            to: store,
            sequences: sequences
        )
    }

    /// Applies users and roles to `store`; roles first, in name order, then users.
    ///
    /// - Parameters:
    ///   - users: Users by name.
    ///   - roles: Roles by name.
    ///   - allowEmptyPassword: Whether new users may have no or an empty password.
    ///   - fieldPrefix: The configuration path of the database, for error messages.
    ///   - store: The store to update.
    ///   - sequences: Allocates the sequence of each principal created or changed; `nil` leaves sequences alone.
    ///     Unchanged principals are not written.
    public func apply(
        users: [String: UserConfig],
        roles: [String: RoleConfig],
        allowEmptyPassword: Bool,
        fieldPrefix: String = "",
        to store: any PrincipalStore,
        sequences: (() throws(GatewayError) -> UInt64)? = nil
    ) throws(GatewayError) {
        let prefix = fieldPrefix.isEmpty ? "" : fieldPrefix + "."
        for name in roles.keys.sorted() {
            guard let config = roles[name] else { continue }
            try validate(name: name, channels: config.adminChannels, field: "\(prefix)roles.\(name)")
            let existing = try store.role(named: name)
            var role = existing ?? Role(name: name)
            role.adminChannels = Set(config.adminChannels)
            guard role != existing else { continue }
            if let sequences { role.sequence = try sequences() }
            try store.putRole(role)
        }
        for name in users.keys.sorted() {
            guard let config = users[name] else { continue }
            let field = "\(prefix)users.\(name)"
            try validate(name: name, channels: config.adminChannels, field: field)
            for role in config.adminRoles where role.isEmpty || !PrincipalName.isValid(role) {
                throw .invalidConfig(field: "\(field).admin_roles", problem: "invalid role name \"\(role)\"")
            }
            let existing = try store.user(named: name)
            var user: User
            if config.isGuest {
                user = guest(from: config, existing: existing)
                guard user != existing else { continue }
            } else if existing == nil {
                user = try newUser(from: config, allowEmptyPassword: allowEmptyPassword, field: field)
            } else {
                continue
            }
            if let sequences { user.sequence = try sequences() }
            try store.putUser(user)
        }
    }

    // MARK: - Helpers

    /// The GUEST user from its configuration, keeping the document grants of the stored one.
    private func guest(from config: UserConfig, existing: User?) -> User {
        var guest = existing ?? User(name: PrincipalName.guest)
        guest.passwordHash = nil
        guest.adminChannels = Set(config.adminChannels)
        guest.adminRoles = Set(config.adminRoles)
        guest.email = config.email
        guest.disabled = config.disabled
        return guest
    }

    /// A new user from its configuration, with its password hashed.
    private func newUser(from config: UserConfig, allowEmptyPassword: Bool, field: String) throws(GatewayError)
        -> User
    {
        let password = config.password ?? ""
        let passwordHash: String
        do {
            try PasswordRule.check(password, allowEmpty: allowEmptyPassword)
            passwordHash = try hasher.hash(password, allowEmpty: allowEmptyPassword)
        } catch {
            throw .invalidConfig(field: "\(field).password", problem: error.reason)
        }
        return User(
            name: config.name,
            passwordHash: passwordHash,
            adminChannels: Set(config.adminChannels),
            adminRoles: Set(config.adminRoles),
            email: config.email,
            disabled: config.disabled
        )
    }

    /// Checks a principal name and its `admin_channels`.
    private func validate(name: String, channels: [String], field: String) throws(GatewayError) {
        guard !name.isEmpty, PrincipalName.isValid(name) else {
            throw .invalidConfig(field: field, problem: "invalid name \"\(name)\"")
        }
        for channel in channels where !PrincipalName.isValidChannel(channel) {
            throw .invalidConfig(field: "\(field).admin_channels", problem: "illegal channel name \"\(channel)\"")
        }
    }
}
