// MARK: - PrincipalGrants

/// What a user's channel grant sequences (``GatewayStorage/channelGrantSequences(of:)``) are computed from: the
/// channels and roles documents granted the user, and the user's roles with the channels documents granted them,
/// each grant at its earliest sequence. Storages gather it as they can (PostgreSQL in two statements); the
/// computation is this one.
///
/// ```swift
/// var grants = PrincipalGrants(channels: ["a": 7], roles: ["editor": 9])
/// for name in grants.roleNames(of: user) { grants.add(role: try store.role(named: name)!, channels: [:]) }
/// grants.sequences(of: user)  // ["!": 1, "a": 7, …]
/// ```
struct PrincipalGrants {
    /// The channels documents granted the user, at their earliest grant.
    var channels: [String: UInt64]
    /// The roles documents granted the user, at their earliest grant.
    var roles: [String: UInt64]
    /// The user's roles that exist, by name.
    private(set) var storedRoles: [String: Role] = [:]
    /// The channels documents granted each of those roles (`role:NAME`), at their earliest grant.
    private(set) var roleChannels: [String: [String: UInt64]] = [:]

    init(channels: [String: UInt64], roles: [String: UInt64]) {
        self.channels = channels
        self.roles = roles
    }

    /// The roles to read: the user's own and those documents granted it.
    func roleNames(of user: User) -> Set<String> {
        Set(user.adminRoles).union(roles.keys)
    }

    /// Adds a role the user has, with the channels documents granted it.
    mutating func add(role: Role, channels: [String: UInt64]) {
        storedRoles[role.name] = role
        roleChannels[role.name] = channels
    }

    /// Every channel `user` can read, each with the sequence at which they gained it (see
    /// ``GatewayStorage/channelGrantSequences(of:)``).
    func sequences(of user: User) -> [String: UInt64] {
        var sequences: [String: UInt64] = [PrincipalName.publicChannel: 1]
        func grant(_ channel: String, at sequence: UInt64) {
            sequences[channel] = min(sequences[channel] ?? .max, max(sequence, 1))
        }
        for channel in user.adminChannels { grant(channel, at: user.sequence) }
        for (channel, sequence) in channels { grant(channel, at: sequence) }
        var held: [String: UInt64] = [:]
        for role in user.adminRoles { held[role] = max(user.sequence, 1) }
        for (role, sequence) in roles { held[role] = min(held[role] ?? .max, max(sequence, 1)) }
        for (name, roleSequence) in held {
            guard let role = storedRoles[name] else { continue }
            // The role record's sequence bounds when the role existed: grants made to `role:NAME` before the role
            // was created only took effect then.
            let since = max(roleSequence, role.sequence)
            for channel in role.adminChannels { grant(channel, at: since) }
            for (channel, sequence) in roleChannels[name] ?? [:] { grant(channel, at: max(since, sequence)) }
        }
        return sequences
    }
}
