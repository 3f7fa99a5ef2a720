import CouchetteCore
import Foundation

// MARK: - DatabasePrincipals

/// The admin API's operations on one database's users, roles and sessions (spec: gateway-rest-api.md §13, §14),
/// usable without HTTP.
///
/// ```swift
/// let principals = database.principals
/// let created = try principals.saveUser(UserUpdate(name: "user1", password: "pass"))   // true
/// try principals.saveUser(UserUpdate(name: "user1", adminRoles: ["moderator"]))         // false: replaced
/// try principals.userJSON(named: "user1")["roles"]                                     // ["moderator"]
/// let session = try principals.createSession(for: "user1")
/// ```
///
/// Every change that alters a principal takes a new database sequence (sync-function.md §8.1) and wakes the
/// database's `_changes` feeds. A password change deletes the user's sessions and forgets its cached
/// verifications; so does deleting the user.
public struct DatabasePrincipals: Sendable {
    // MARK: - Properties

    /// The database.
    public let database: GatewayDatabase

    /// The store of users, roles and sessions.
    var store: any GatewayStorage { database.storage }

    // MARK: - Users

    /// The user names, sorted, without `GUEST` (`GET /{db}/_user/`).
    public func userNames() throws(GatewayError) -> [String] {
        try store.userNames().filter { $0 != PrincipalName.guest }
    }

    /// The user named `name`; `GUEST` exists even when never stored (disabled, without channels).
    public func user(named name: String) throws(GatewayError) -> User? {
        if let user = try store.user(named: name) { return user }
        return name == PrincipalName.guest ? User.defaultGuest : nil
    }

    /// Every channel `user` can read: `!`, their own, their roles', and those documents grant them or their roles.
    public func allChannels(of user: User) throws(GatewayError) -> Set<String> {
        try database.storage.allChannels(of: user)
    }

    /// ``allChannels(of:)``, awaited: a storage across a network holds no thread while it answers.
    public func fetchAllChannels(of user: User) async throws(GatewayError) -> Set<String> {
        try await database.storage.fetchAllChannels(of: user)
    }

    /// The admin API's JSON for a user (``User/jsonValue(roles:)``): no password, `all_channels` and `roles`
    /// computed.
    ///
    /// - Throws: 404 `missing` for an unknown user.
    public func userJSON(named name: String) throws(GatewayError) -> JSONValue {
        guard let user = try user(named: name) else { throw .notFound("missing") }
        return user.jsonValue(roles: try store.roles(of: user))
    }

    /// Creates or replaces a user (`PUT /{db}/_user/{name}`, `POST /{db}/_user/`) with replace semantics.
    ///
    /// - Parameters:
    ///   - update: The parsed body.
    ///   - mustBeNew: Whether an existing user is an error (`POST`).
    /// - Returns: `true` when the user was created, `false` when replaced.
    /// - Throws: 409 `Already exists` when `mustBeNew` and the user exists; 400 for password rules
    ///   (``UserUpdate/applied(to:hasher:allowEmptyPassword:)``).
    @discardableResult
    public func saveUser(_ update: UserUpdate, mustBeNew: Bool = false) throws(GatewayError) -> Bool {
        let allowEmptyPassword = database.config.allowEmptyPassword
        let (created, sequence) = try database.principalLock.withLock { _ throws(GatewayError) in
            let existing = try user(named: update.name)
            if mustBeNew, existing != nil { throw GatewayError.conflict("Already exists") }
            var user = try update.applied(
                to: existing, hasher: database.authenticator.hasher, allowEmptyPassword: allowEmptyPassword)
            guard user != existing else { return (false, UInt64(0)) }
            // One transaction: no feed reads past the user's sequence before the user is stored with it (PostgreSQL
            // holds its stable sequence below a transaction's sequences until it commits).
            try store.inBatch { batch throws(GatewayError) in
                user.sequence = try batch.nextSequence()
                try batch.putUser(user)
                if existing != nil, update.changesPassword { try batch.deleteSessions(forUser: update.name) }
            }
            if existing != nil, update.changesPassword {
                database.authenticator.invalidateCachedCredentials(forUser: update.name)
            }
            return (existing == nil, user.sequence)
        }
        announce(sequence)
        return created
    }

    /// Deletes a user, its sessions and its cached verifications (`DELETE /{db}/_user/{name}`).
    ///
    /// - Throws: 404 `missing` for an unknown user.
    public func deleteUser(named name: String) throws(GatewayError) {
        try database.principalLock.withLock { _ throws(GatewayError) in
            guard try store.deleteUser(named: name) else { throw GatewayError.notFound("missing") }
            try store.deleteSessions(forUser: name)
        }
        database.authenticator.invalidateCachedCredentials(forUser: name)
        GatewayMetrics.shared.principalUpdated()
    }

    // MARK: - Roles

    /// The role names, sorted (`GET /{db}/_role/`).
    public func roleNames() throws(GatewayError) -> [String] {
        try store.roleNames()
    }

    /// The admin API's JSON for a role (``Role/jsonValue``).
    ///
    /// - Throws: 404 `missing` for an unknown role.
    public func roleJSON(named name: String) throws(GatewayError) -> JSONValue {
        guard let role = try store.role(named: name) else { throw .notFound("missing") }
        return role.jsonValue
    }

    /// Creates or replaces a role (`PUT /{db}/_role/{name}`, `POST /{db}/_role/`).
    ///
    /// - Parameters:
    ///   - update: The parsed body.
    ///   - mustBeNew: Whether an existing role is an error (`POST`).
    /// - Returns: `true` when the role was created, `false` when replaced.
    /// - Throws: 409 `Already exists` when `mustBeNew` and the role exists.
    @discardableResult
    public func saveRole(_ update: RoleUpdate, mustBeNew: Bool = false) throws(GatewayError) -> Bool {
        let (created, sequence) = try database.principalLock.withLock { _ throws(GatewayError) in
            let existing = try store.role(named: update.name)
            if mustBeNew, existing != nil { throw GatewayError.conflict("Already exists") }
            var role = update.applied(to: existing)
            guard role != existing else { return (false, UInt64(0)) }
            try store.inBatch { batch throws(GatewayError) in  // as a user's (saveUser)
                role.sequence = try batch.nextSequence()
                try batch.putRole(role)
            }
            return (existing == nil, role.sequence)
        }
        announce(sequence)
        return created
    }

    /// Deletes a role (`DELETE /{db}/_role/{name}`); its members simply stop getting its channels.
    ///
    /// - Throws: 404 `missing` for an unknown role.
    public func deleteRole(named name: String) throws(GatewayError) {
        guard try store.deleteRole(named: name) else { throw .notFound("missing") }
        GatewayMetrics.shared.principalUpdated()
    }

    // MARK: - Sessions

    /// Creates a session for an existing user (admin `POST /{db}/_session`, and logins).
    ///
    /// - Throws: As ``SessionManager/createSession(for:ttl:)``.
    public func createSession(for username: String, ttl: TimeInterval = Session.defaultTTL) throws(GatewayError)
        -> Session
    {
        let session = try database.authenticator.sessions.createSession(for: username, ttl: ttl)
        GatewayMetrics.shared.sessionCreated()
        return session
    }

    /// The live session with this ID.
    ///
    /// - Throws: 404 `missing` for unknown, malformed or expired IDs.
    public func session(id: String) throws(GatewayError) -> Session {
        guard let session = try database.authenticator.sessions.session(id: id) else { throw .notFound("missing") }
        return session
    }

    /// Deletes a session (`DELETE /{db}/_session/{id}`, `DELETE /{db}/_user/{name}/_session/{id}`).
    ///
    /// - Parameters:
    ///   - id: The session ID.
    ///   - username: The user the session must belong to, or `nil` for any.
    /// - Throws: 404 `missing` when there is no such session, or it is another user's.
    public func deleteSession(id: String, ofUser username: String? = nil) throws(GatewayError) {
        guard Session.isWellFormedID(id), let session = try store.session(id: id),
            ConstantTime.equals(session.id, id), username == nil || session.username == username
        else { throw .notFound("missing") }
        try store.deleteSession(id: session.id)
    }

    /// Deletes every session of a user (`DELETE /{db}/_user/{name}/_session`).
    ///
    /// - Returns: How many sessions there were.
    /// - Throws: 404 `missing` for an unknown user.
    @discardableResult
    public func deleteSessions(ofUser username: String) throws(GatewayError) -> Int {
        guard try store.user(named: username) != nil else { throw .notFound("missing") }
        return try store.deleteSessions(forUser: username)
    }

    /// The user's unexpired sessions, soonest to expire first.
    ///
    /// - Throws: 404 `missing` for an unknown user.
    public func sessions(ofUser username: String) throws(GatewayError) -> [Session] {
        guard try store.user(named: username) != nil else { throw .notFound("missing") }
        let now = Date()
        return try store.sessions(forUser: username).filter { $0.expires > now }.sorted { $0.expires < $1.expires }
    }

    // MARK: - Helpers

    /// Counts a principal change and wakes feeds at its sequence (0: nothing changed).
    private func announce(_ sequence: UInt64) {
        guard sequence > 0 else { return }
        GatewayMetrics.shared.principalUpdated()
        database.storage.announce(sequence, to: database.changeNotifier)
    }
}
