import Foundation

// MARK: - InMemoryPrincipalStore

/// A ``PrincipalStore`` in memory, guarded by a lock: for `walrus:` databases and tests.
///
/// ```swift
/// let store = InMemoryPrincipalStore()
/// try store.putUser(User(name: "user1"))
/// try store.userNames()   // ["user1"]
/// ```
public final class InMemoryPrincipalStore: PrincipalStore, @unchecked Sendable {
    // MARK: - State

    /// Guards every stored dictionary.
    private let lock = NSLock()
    private var users: [String: User] = [:]
    private var roles: [String: Role] = [:]
    private var sessions: [String: Session] = [:]

    // MARK: - Initialiser

    /// Creates an empty store.
    public init() {}

    // MARK: - Users

    /// The user named `name`, or `nil`.
    public func user(named name: String) -> User? {
        lock.withLock { users[name] }
    }

    /// Stores `user`, replacing any user with the same name.
    public func putUser(_ user: User) {
        lock.withLock { users[user.name] = user }
    }

    /// Deletes the user; `false` when there was none.
    @discardableResult
    public func deleteUser(named name: String) -> Bool {
        lock.withLock { users.removeValue(forKey: name) != nil }
    }

    /// Every user name, sorted.
    public func userNames() -> [String] {
        lock.withLock { users.keys.sorted() }
    }

    // MARK: - Roles

    /// The role named `name`, or `nil`.
    public func role(named name: String) -> Role? {
        lock.withLock { roles[name] }
    }

    /// Stores `role`, replacing any role with the same name.
    public func putRole(_ role: Role) {
        lock.withLock { roles[role.name] = role }
    }

    /// Deletes the role; `false` when there was none.
    @discardableResult
    public func deleteRole(named name: String) -> Bool {
        lock.withLock { roles.removeValue(forKey: name) != nil }
    }

    /// Every role name, sorted.
    public func roleNames() -> [String] {
        lock.withLock { roles.keys.sorted() }
    }

    // MARK: - Sessions

    /// The session with this ID, or `nil`.
    public func session(id: String) -> Session? {
        lock.withLock { sessions[id] }
    }

    /// Stores `session`, replacing any session with the same ID.
    public func putSession(_ session: Session) {
        lock.withLock { sessions[session.id] = session }
    }

    /// Deletes the session; `false` when there was none.
    @discardableResult
    public func deleteSession(id: String) -> Bool {
        lock.withLock { sessions.removeValue(forKey: id) != nil }
    }

    /// Every session of the user.
    public func sessions(forUser username: String) -> [Session] {
        lock.withLock { sessions.values.filter { $0.username == username } }
    }
}
