// MARK: - PrincipalStore

/// Persistence for users, roles and sessions of one database.
///
/// Synchronous and throwing ``GatewayError``, with `async` twins of the reads every request makes (`fetch…`);
/// implementations must be safe to call from any thread.
/// ``InMemoryPrincipalStore`` is the in-memory implementation; a SQLite-backed one lives with the storage layer.
/// Names are case-sensitive; `put…` inserts or replaces.
public protocol PrincipalStore: Sendable {
    // MARK: - Users

    /// The user named `name`, or `nil`.
    func user(named name: String) throws(GatewayError) -> User?

    /// Stores `user`, replacing any user with the same name.
    func putUser(_ user: User) throws(GatewayError)

    /// Deletes the user; `false` when there was none. Does not delete its sessions.
    @discardableResult
    func deleteUser(named name: String) throws(GatewayError) -> Bool

    /// Every user name, sorted.
    func userNames() throws(GatewayError) -> [String]

    // MARK: - Roles

    /// The role named `name`, or `nil`.
    func role(named name: String) throws(GatewayError) -> Role?

    /// Stores `role`, replacing any role with the same name.
    func putRole(_ role: Role) throws(GatewayError)

    /// Deletes the role; `false` when there was none.
    @discardableResult
    func deleteRole(named name: String) throws(GatewayError) -> Bool

    /// Every role name, sorted.
    func roleNames() throws(GatewayError) -> [String]

    // MARK: - Sessions

    /// The session with this ID, expired or not, or `nil`.
    func session(id: String) throws(GatewayError) -> Session?

    /// Stores `session`, replacing any session with the same ID.
    func putSession(_ session: Session) throws(GatewayError)

    /// Deletes the session; `false` when there was none.
    @discardableResult
    func deleteSession(id: String) throws(GatewayError) -> Bool

    /// Every session of the user, expired or not.
    func sessions(forUser username: String) throws(GatewayError) -> [Session]

    // MARK: - Channels

    /// The channels `user` can read, with its roles loaded from this store (``User/allChannels(roles:)``);
    /// stores may remember the result until the user or one of its roles changes.
    func allChannels(of user: User) throws(GatewayError) -> Set<String>

    // MARK: - Awaiting

    /// ``user(named:)`` for `async` callers: a store across a network holds no thread while it answers.
    func fetchUser(named name: String) async throws(GatewayError) -> User?

    /// ``session(id:)`` for `async` callers: a store across a network holds no thread while it answers.
    func fetchSession(id: String) async throws(GatewayError) -> Session?

    /// ``allChannels(of:)`` for `async` callers: a store across a network holds no thread while it answers.
    func fetchAllChannels(of user: User) async throws(GatewayError) -> Set<String>
}

// MARK: - Conveniences

extension PrincipalStore {
    /// ``user(named:)``, in place: the store answers without waiting on a network.
    public func fetchUser(named name: String) async throws(GatewayError) -> User? {
        try user(named: name)
    }

    /// ``session(id:)``, in place: the store answers without waiting on a network.
    public func fetchSession(id: String) async throws(GatewayError) -> Session? {
        try session(id: id)
    }

    /// ``allChannels(of:)``, in place: the store answers without waiting on a network.
    public func fetchAllChannels(of user: User) async throws(GatewayError) -> Set<String> {
        try allChannels(of: user)
    }

    /// The roles of `user` that exist (``User/roleNames``), sorted by name; missing roles are skipped.
    public func roles(of user: User) throws(GatewayError) -> [Role] {
        var roles: [Role] = []
        for name in user.roleNames.sorted() {
            if let role = try role(named: name) { roles.append(role) }
        }
        return roles
    }

    /// The channels `user` can read, computed from its roles in this store (``User/allChannels(roles:)``).
    public func allChannels(of user: User) throws(GatewayError) -> Set<String> {
        user.allChannels(roles: try roles(of: user))
    }

    /// Deletes every session of the user; returns how many there were.
    @discardableResult
    public func deleteSessions(forUser username: String) throws(GatewayError) -> Int {
        var count = 0
        for session in try sessions(forUser: username) where try deleteSession(id: session.id) {
            count += 1
        }
        return count
    }
}
