// MARK: - Channel grant sequences

extension GatewayStorage {
    /// `user` as stored, with the channels and roles documents grant it (``User/channelsFromGrants``,
    /// ``User/rolesFromGrants``): how every storage loads a user.
    func withDocumentGrants(_ user: User) throws(GatewayError) -> User {
        var user = user
        user.channelsFromGrants = Set(try documentChannelGrants(to: user.name).keys)
        user.rolesFromGrants = Set(try documentRoleGrants(to: user.name).keys)
        return user
    }

    /// `role` as stored, with the channels documents grant `role:NAME`: how every storage loads a role.
    func withDocumentGrants(_ role: Role) throws(GatewayError) -> Role {
        var role = role
        role.channelsFromGrants = Set(try documentChannelGrants(to: PrincipalCache.rolePrincipal(role.name)).keys)
        return role
    }

    /// Every channel `user` can read, each with the sequence at which they gained it (spec: sync-function.md
    /// §7.3): `admin_channels` at the user record's sequence; channels documents granted them; for each role
    /// (explicit at the user record's sequence, or granted by a document) its `admin_channels` and the channels
    /// documents granted `role:NAME`, at the latest of the role grant, the role record's sequence and the channel
    /// grant; `!` at 1. On duplicates the earliest sequence wins. Configuration principals (sequence 0) count as 1:
    /// they never trigger backfill.
    ///
    /// The user record's sequence stands for the sequence of every admin-made grant: any admin update of the user
    /// (a password change too) makes its admin channels and roles count as new, and any update of a role its
    /// channels, so a feed may re-send them (records keep no per-grant sequence); sending a document twice is
    /// harmless to replicators, missing one is not.
    public func channelGrantSequences(of user: User) throws(GatewayError) -> [String: UInt64] {
        try computeChannelGrantSequences(of: user)
    }

    /// ``channelGrantSequences(of:)`` computed from the stored grants (storages that cache call this on a miss).
    func computeChannelGrantSequences(of user: User) throws(GatewayError) -> [String: UInt64] {
        var grants = PrincipalGrants(
            channels: try documentChannelGrants(to: user.name), roles: try documentRoleGrants(to: user.name))
        for name in grants.roleNames(of: user) {
            guard let role = try role(named: name) else { continue }
            grants.add(role: role, channels: try documentChannelGrants(to: PrincipalCache.rolePrincipal(name)))
        }
        return grants.sequences(of: user)
    }
}
