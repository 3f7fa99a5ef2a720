// MARK: - PrincipalCache

/// Users and roles as last loaded, and each user's effective channels, kept until a write touches them: a user
/// granted 40,000 channels pays for loading and merging them once per change of its grants, not on every request.
///
/// Each principal — a user name, or `role:NAME` as in the grants table — has a version that every write touching
/// it bumps (its record stored or deleted, a document granting it channels or roles, or taking them back). An
/// entry is used only while the versions it was made from are current. Not thread-safe: ``SQLiteGatewayStorage``
/// uses it under its lock, the same lock its writes hold, so an entry can never be made from half a write.
final class PrincipalCache {
    /// What was computed for a user, with what it was computed from.
    private struct Channels {
        let user: User
        let stamp: [UInt64]
        let channels: Set<String>
        var sequences: [String: UInt64] = [:]
    }

    private var versions: [String: UInt64] = [:]
    private var nextVersion: UInt64 = 1
    private var users: [String: (version: UInt64, user: User)] = [:]
    private var roles: [String: (version: UInt64, role: Role)] = [:]
    private var channels: [String: Channels] = [:]
    private var grantSequences: [String: Channels] = [:]
    /// Channels documents granted cached users, not yet added to their entries (``addChannel(_:toUser:at:)``).
    private var pendingChannels: [String: [(channel: String, sequence: UInt64)]] = [:]

    /// The most entries of each kind; past it the kind is emptied (they are remade on demand).
    let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
    }

    // MARK: - Invalidation

    /// Marks `principal` (a user name or `role:NAME`) changed.
    func invalidate(_ principal: String) {
        versions[principal] = nextVersion
        nextVersion += 1
        pendingChannels[principal] = nil
    }

    /// Marks every principal changed (a whole-index rebuild).
    func invalidateAll() {
        versions.removeAll()
        users.removeAll()
        roles.removeAll()
        channels.removeAll()
        grantSequences.removeAll()
        pendingChannels.removeAll()
        nextVersion += 1
    }

    /// Brings cached entries up to date with the grants a document write added (at `sequence`) and removed.
    ///
    /// Added grants change cached users, roles and effective channels in place — a user granted one more channel
    /// is not reloaded with all its others, and a user's channel grants are added when it is next read
    /// (``deferChannel(_:toUser:at:)``); removed ones invalidate their principal (another document may still make
    /// the same grant, which only a reload tells).
    func apply(added: [DocumentGrant], removed: [DocumentGrant], at sequence: UInt64) {
        for grant in removed { invalidate(grant.principal) }
        for grant in added {
            switch grant.kind {
            case .channel where grant.principal.hasPrefix(Self.rolePrefix):
                let role = String(grant.principal.dropFirst(Self.rolePrefix.count))
                // Only a role known to exist gives its users channels: otherwise reload whatever depends on it.
                guard let cached = roles[role], cached.version == version(grant.principal) else {
                    invalidate(grant.principal)
                    continue
                }
                addPendingChannels()  // the entries below must hold their users' own grants first
                roles[role]?.role.channelsFromGrants.insert(grant.target)
                for (name, entry) in channels where entry.user.roleNames.contains(role) {
                    channels[name] = Channels(
                        user: entry.user, stamp: entry.stamp,
                        channels: PrincipalName.collapsingWildcard(entry.channels.union([grant.target])))
                    grantSequences[name] = nil
                }
            case .channel:
                deferChannel(grant.target, toUser: grant.principal, at: sequence)
            case .role:
                addPendingChannels(of: grant.principal)
                users[grant.principal]?.user.rolesFromGrants.insert(grant.target)
                channels[grant.principal] = nil
                grantSequences[grant.principal] = nil
            }
        }
    }

    /// Notes that a document granted `channel` to cached user `name` at `sequence`, to be added to its entries when
    /// it is next read: a request holding the user's sets while this write runs would otherwise make the insert copy
    /// them (40,000 channels: ~1 ms) under the lock every request waits for, once per write. Past
    /// ``pendingLimit`` grants the user is reloaded instead.
    private func deferChannel(_ channel: String, toUser name: String, at sequence: UInt64) {
        guard users[name] != nil else { return }
        pendingChannels[name, default: []].append((channel, sequence))
        if pendingChannels[name, default: []].count > Self.pendingLimit { invalidate(name) }
    }

    /// The most grants kept waiting for one user.
    static let pendingLimit = 1_000

    /// Adds the channels documents granted user `name` (every user when nil) since its entries were last read.
    private func addPendingChannels(of name: String? = nil) {
        let names = name.map { [$0] } ?? Array(pendingChannels.keys)
        for name in names {
            guard let pending = pendingChannels.removeValue(forKey: name) else { continue }
            for grant in pending { addChannel(grant.channel, toUser: name, at: grant.sequence) }
        }
    }

    /// A document granted `channel` to user `name` at `sequence`: the cached user, its effective channels and grant
    /// sequences gain it, each collection changed in place. The entries are taken out of their dictionaries and
    /// nothing else is left holding the user's sets, so that no copy is made: copying a user's 40,000 channels
    /// three times per grant took a third of a writer's time, under the lock every request waits for.
    private func addChannel(_ channel: String, toUser name: String, at sequence: UInt64) {
        guard var cached = users.removeValue(forKey: name) else { return }
        // Whether the derived entries were made for the user as it is before this grant (they share its sets, so
        // this compares identities, not 40,000 strings).
        var effective = channels.removeValue(forKey: name).flatMap { entry in
            entry.user == cached.user ? (stamp: entry.stamp, channels: entry.channels) : nil
        }
        var sequences = grantSequences.removeValue(forKey: name).flatMap { entry in
            entry.user == cached.user ? (stamp: entry.stamp, sequences: entry.sequences) : nil
        }
        cached.user.channelsFromGrants.insert(channel)
        users[name] = cached
        // `take()` moves each entry out, leaving no second holder of its collection.
        if var entry = effective.take() {
            entry.channels.insert(channel)
            channels[name] = Channels(
                user: cached.user, stamp: entry.stamp, channels: PrincipalName.collapsingWildcard(entry.channels))
        }
        if var entry = sequences.take() {
            entry.sequences[channel] = min(entry.sequences[channel] ?? .max, max(sequence, 1))
            grantSequences[name] = Channels(
                user: cached.user, stamp: entry.stamp, channels: [], sequences: entry.sequences)
        }
    }

    private func version(_ principal: String) -> UInt64 {
        versions[principal] ?? 0
    }

    // MARK: - Users and roles

    /// The cached user, if still current.
    func user(named name: String) -> User? {
        addPendingChannels(of: name)
        guard let entry = users[name], entry.version == version(name) else { return nil }
        return entry.user
    }

    /// Remembers a user just loaded.
    func store(_ user: User) {
        pendingChannels[user.name] = nil  // loaded with every grant stored
        if users.count >= capacity { users.removeAll(keepingCapacity: true) }
        users[user.name] = (version(user.name), user)
    }

    /// The cached role, if still current.
    func role(named name: String) -> Role? {
        guard let entry = roles[name], entry.version == version(Self.rolePrincipal(name)) else { return nil }
        return entry.role
    }

    /// Remembers a role just loaded.
    func store(_ role: Role) {
        if roles.count >= capacity { roles.removeAll(keepingCapacity: true) }
        roles[role.name] = (version(Self.rolePrincipal(role.name)), role)
    }

    // MARK: - Effective channels

    /// The channels of `user` computed earlier, if `user` is the one they were computed for and neither it nor
    /// any of its roles changed since.
    func channels(of user: User) -> Set<String>? {
        addPendingChannels(of: user.name)
        guard let entry = channels[user.name], entry.stamp == stamp(of: user), entry.user == user else { return nil }
        return entry.channels
    }

    /// Remembers the channels of `user`, unless a write changed the cached user since `user` was read: the entry
    /// kept (made for the user as it is now, or none) must not be replaced with an older user's, which every later
    /// read would miss.
    func store(_ channelSet: Set<String>, of user: User) {
        addPendingChannels(of: user.name)
        guard isCurrent(user) else { return }
        if channels.count >= capacity { channels.removeAll(keepingCapacity: true) }
        channels[user.name] = Channels(user: user, stamp: stamp(of: user), channels: channelSet)
    }

    /// Each channel of `user` with the sequence at which it was granted, computed earlier, if still current.
    func grantSequences(of user: User) -> [String: UInt64]? {
        addPendingChannels(of: user.name)
        guard let entry = grantSequences[user.name], entry.stamp == stamp(of: user), entry.user == user else {
            return nil
        }
        return entry.sequences
    }

    /// Remembers the grant sequences of `user`, unless a write changed the cached user since it was read.
    func store(grantSequences sequences: [String: UInt64], of user: User) {
        addPendingChannels(of: user.name)
        guard isCurrent(user) else { return }
        if grantSequences.count >= capacity { grantSequences.removeAll(keepingCapacity: true) }
        grantSequences[user.name] = Channels(user: user, stamp: stamp(of: user), channels: [], sequences: sequences)
    }

    /// Whether `user` is the cached user of its name (or none is cached): the same sets, so the comparison is quick.
    private func isCurrent(_ user: User) -> Bool {
        users[user.name].map { $0.user == user } ?? true
    }

    /// The versions the channels of `user` depend on: its own, then its roles' in name order.
    private func stamp(of user: User) -> [UInt64] {
        [version(user.name)] + user.roleNames.sorted().map { version(Self.rolePrincipal($0)) }
    }

    /// The grants table's principal for a role.
    static func rolePrincipal(_ name: String) -> String {
        rolePrefix + name
    }

    /// What a role's name is prefixed with as a grant's principal.
    static let rolePrefix = "role:"
}
