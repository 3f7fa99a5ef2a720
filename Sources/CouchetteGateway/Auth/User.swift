// MARK: - User

/// A user account: credentials, administrator grants, and the grants documents made through the sync function.
///
/// ```swift
/// let user1 = User(name: "user1", passwordHash: hash, adminChannels: ["user1"], adminRoles: ["moderator"])
/// user1.allChannels(roles: [Role(name: "moderator", adminChannels: ["moderators"])])
/// // ["!", "moderators", "user1"]
/// ```
///
/// The name `GUEST` (``PrincipalName/guest``) is the anonymous user; it has no password and is disabled unless the
/// configuration enables it (``User/defaultGuest``).
///
/// `description`, `debugDescription` and `dump` never show the password hash. `Codable` encodes the stored form,
/// hash included, for ``PrincipalStore`` implementations; the REST API form is ``jsonValue(roles:)``.
public struct User: Sendable, Equatable, Codable {
    // MARK: - Properties

    /// The user name; ``PrincipalName/guest`` for the anonymous user.
    public var name: String

    /// The bcrypt hash of the password; `nil` when the user has no password (and cannot log in with one).
    public var passwordHash: String?

    /// Channels granted by the administrator (`admin_channels`).
    public var adminChannels: Set<String>

    /// Roles granted by the administrator (`admin_roles`).
    public var adminRoles: Set<String>

    /// Roles granted by documents through the sync function's `role()`.
    public var rolesFromGrants: Set<String>

    /// Channels granted by documents through the sync function's `access()`.
    public var channelsFromGrants: Set<String>

    /// The email address (`email`).
    public var email: String?

    /// Whether the user is disabled: it cannot authenticate, and sessions stop working.
    public var disabled: Bool

    /// The database sequence of the user's last change, assigned by the database layer (0 = unassigned).
    public var sequence: UInt64

    // MARK: - Initialiser

    /// Creates a user.
    public init(
        name: String,
        passwordHash: String? = nil,
        adminChannels: Set<String> = [],
        adminRoles: Set<String> = [],
        rolesFromGrants: Set<String> = [],
        channelsFromGrants: Set<String> = [],
        email: String? = nil,
        disabled: Bool = false,
        sequence: UInt64 = 0
    ) {
        self.name = name
        self.passwordHash = passwordHash
        self.adminChannels = adminChannels
        self.adminRoles = adminRoles
        self.rolesFromGrants = rolesFromGrants
        self.channelsFromGrants = channelsFromGrants
        self.email = email
        self.disabled = disabled
        self.sequence = sequence
    }

    // MARK: - Guest

    /// Whether this is the anonymous user, `GUEST`.
    public var isGuest: Bool { name == PrincipalName.guest }

    /// The anonymous user as it is when the configuration does not mention it: disabled, without channels.
    public static var defaultGuest: User {
        User(name: PrincipalName.guest, disabled: true)
    }

    // MARK: - Roles and channels

    /// Every role of the user: `admin_roles ∪` roles granted by `role()`.
    public var roleNames: Set<String> {
        adminRoles.union(rolesFromGrants)
    }

    /// The channels the user can read: `admin_channels ∪` document grants `∪` the channels of each of its roles
    /// (administrator and document grants) `∪ {"!"}`; just `{"*"}` when any of them is `*` (everything).
    ///
    /// - Parameter roles: The user's roles as loaded from the store; roles not in ``roleNames`` are ignored and
    ///   missing roles contribute nothing.
    public func allChannels(roles: [Role]) -> Set<String> {
        var channels = adminChannels.union(channelsFromGrants)
        let memberships = roleNames
        for role in roles where memberships.contains(role.name) {
            channels.formUnion(role.adminChannels)
            channels.formUnion(role.channelsFromGrants)
        }
        channels.insert(PrincipalName.publicChannel)
        return PrincipalName.collapsingWildcard(channels)
    }
}

// MARK: - Redacted descriptions

extension User: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description without the password hash, e.g. `User(name: "user1", password: <set>, admin_channels: [...])`.
    public var description: String {
        var parts = ["name: \"\(name)\""]
        parts.append("password: \(passwordHash == nil ? "<none>" : "<set>")")
        parts.append("admin_channels: \(adminChannels.sorted())")
        parts.append("admin_roles: \(adminRoles.sorted())")
        if !channelsFromGrants.isEmpty { parts.append("granted_channels: \(channelsFromGrants.sorted())") }
        if !rolesFromGrants.isEmpty { parts.append("granted_roles: \(rolesFromGrants.sorted())") }
        if let email { parts.append("email: \"\(email)\"") }
        if disabled { parts.append("disabled: true") }
        return "User(\(parts.joined(separator: ", ")))"
    }

    /// Same as ``description``: the hash is never shown.
    public var debugDescription: String { description }

    /// A mirror without the password hash, so that `dump` and descriptions of containing types stay redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name,
                "password": passwordHash == nil ? "<none>" : "<set>",
                "adminChannels": adminChannels.sorted(),
                "adminRoles": adminRoles.sorted(),
                "rolesFromGrants": rolesFromGrants.sorted(),
                "channelsFromGrants": channelsFromGrants.sorted(),
                "email": email as Any,
                "disabled": disabled,
                "sequence": sequence,
            ],
            displayStyle: .struct
        )
    }
}
