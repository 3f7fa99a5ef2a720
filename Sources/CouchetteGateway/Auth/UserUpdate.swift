import CouchetteCore

// MARK: - UserUpdate

/// The body of the admin API's `PUT /{db}/_user/{name}` or `POST /{db}/_user/`, parsed and validated.
///
/// Replace semantics (spec: gateway-rest-api.md §14): ``adminChannels``, ``adminRoles``, ``email`` and ``disabled``
/// overwrite the stored values (omitted means cleared); the password changes only when present. Read-only keys
/// (`all_channels`, `roles`) and unknown keys are ignored.
///
/// ```swift
/// let update = try UserUpdate(parsing: #"{"password":"pass","admin_channels":["user1"]}"#.utf8, name: "user1")
/// let user = try update.applied(to: store.user(named: "user1"), hasher: hasher, allowEmptyPassword: false)
/// if update.changesPassword { try sessions.deleteSessions(forUser: "user1") }
/// ```
///
/// The password is never shown by `description` or `dump`.
public struct UserUpdate: Sendable, Equatable {
    // MARK: - Properties

    /// The user name (from the URL, or from the body for `POST`).
    public var name: String

    /// The new plain-text password, when the body has one.
    public var password: String?

    /// The new `admin_channels`.
    public var adminChannels: Set<String>

    /// The new `admin_roles`.
    public var adminRoles: Set<String>

    /// The new `email`.
    public var email: String?

    /// The new `disabled` flag.
    public var disabled: Bool

    /// Whether applying the update changes the password (the caller then deletes the user's sessions).
    public var changesPassword: Bool { password != nil && name != PrincipalName.guest }

    // MARK: - Initialisers

    /// Creates an update directly.
    public init(
        name: String,
        password: String? = nil,
        adminChannels: Set<String> = [],
        adminRoles: Set<String> = [],
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

    /// Parses a request body.
    ///
    /// - Parameters:
    ///   - body: The JSON body.
    ///   - urlName: The name in the URL (`PUT`), or `nil` when the body must carry it (`POST /{db}/_user/`).
    /// - Throws: 400 naming the field for a wrong type (`"disabled" must be a boolean`), `Missing name property`,
    ///   `Name mismatch (can't change name)`, `Invalid name`, `Illegal channel name`.
    public init(parsing body: JSONValue, name urlName: String?) throws(GatewayError) {
        let object = try PrincipalBody.object(body)
        let name = try PrincipalBody.name(object, urlName: urlName)
        let adminRoles = try PrincipalBody.strings(object, "admin_roles")
        guard adminRoles.allSatisfy({ !$0.isEmpty && PrincipalName.isValid($0) }) else {
            var error = GatewayError.badRequest("Invalid role name")
            error.field = "admin_roles"
            throw error
        }
        self.init(
            name: name,
            password: try PrincipalBody.string(object, "password"),
            adminChannels: try PrincipalBody.channels(object, "admin_channels"),
            adminRoles: adminRoles,
            email: try PrincipalBody.string(object, "email"),
            disabled: try PrincipalBody.bool(object, "disabled") ?? false
        )
    }

    /// Parses JSON text; 400 "Bad JSON" when it is not JSON.
    public init(parsing bytes: some Collection<UInt8>, name urlName: String?) throws(GatewayError) {
        try self.init(parsing: PrincipalBody.parse(bytes), name: urlName)
    }

    // MARK: - Applying

    /// The user after this update: a new user, or `existing` with the administrator fields replaced.
    ///
    /// Document grants, the sequence and (when no password is given) the password hash of `existing` are kept.
    /// A new user without a password gets the empty password when `allowEmptyPassword` is on (as in Sync Gateway,
    /// it then logs in with an empty password). `GUEST` never has a password: one given for it is ignored.
    ///
    /// - Parameters:
    ///   - existing: The stored user, or `nil` to create one.
    ///   - hasher: Hashes a new password.
    ///   - allowEmptyPassword: The database's `allow_empty_password`.
    /// - Throws: 400 `Empty passwords are not allowed ` for a new user without a password or an empty one when not
    ///   allowed; 400 `Passwords must be at least three 3 characters` for a 1–2 character password.
    public func applied(
        to existing: User?,
        hasher: any PasswordHashing,
        allowEmptyPassword: Bool
    ) throws(GatewayError) -> User {
        var user = existing ?? User(name: name)
        user.name = name
        user.adminChannels = adminChannels
        user.adminRoles = adminRoles
        user.email = email
        user.disabled = disabled
        guard name != PrincipalName.guest else {
            user.passwordHash = nil
            return user
        }
        switch password {
        case nil where existing == nil:
            guard allowEmptyPassword else { throw .badRequest("Empty passwords are not allowed ") }
            user.passwordHash = try hasher.hash("", allowEmpty: true)
        case nil:
            break
        case let password?:
            try PasswordRule.check(password, allowEmpty: allowEmptyPassword)
            user.passwordHash = try hasher.hash(password, allowEmpty: allowEmptyPassword)
        }
        return user
    }
}

// MARK: - Redacted descriptions

extension UserUpdate: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description with the password redacted.
    public var description: String {
        "UserUpdate(name: \"\(name)\", password: \(password == nil ? "nil" : "<redacted>"), "
            + "admin_channels: \(adminChannels.sorted()), admin_roles: \(adminRoles.sorted()), "
            + "email: \(email.map { "\"\($0)\"" } ?? "nil"), disabled: \(disabled))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name,
                "password": password == nil ? "nil" : "<redacted>",
                "adminChannels": adminChannels.sorted(),
                "adminRoles": adminRoles.sorted(),
                "email": email as Any,
                "disabled": disabled,
            ],
            displayStyle: .struct
        )
    }
}
