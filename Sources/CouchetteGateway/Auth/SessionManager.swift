import CouchetteCore
import Foundation

// MARK: - SessionManager

/// Creates, looks up, refreshes and deletes sessions in a ``PrincipalStore``, with an injected clock.
///
/// ```swift
/// let sessions = SessionManager(store: store)
/// let session = try sessions.createSession(for: "user1")       // expires in 24 h
/// try sessions.session(id: session.id)?.username                // "user1"
/// ```
///
/// Tests pass a `now` closure to move time without sleeping.
public struct SessionManager: Sendable {
    // MARK: - Properties

    /// Where sessions and users are kept.
    public let store: any PrincipalStore

    /// The clock.
    public let now: @Sendable () -> Date

    // MARK: - Initialiser

    /// Creates a manager over `store`.
    ///
    /// - Parameters:
    ///   - store: The principal store.
    ///   - now: The clock; the system clock by default.
    public init(store: any PrincipalStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.now = now
    }

    // MARK: - Creating

    /// Creates and stores a session for an existing user.
    ///
    /// - Parameters:
    ///   - username: The user; `GUEST` cannot have sessions.
    ///   - ttl: The lifetime in seconds, at least 1; 24 hours by default.
    /// - Throws: 400 `Invalid or missing user name` for an empty, invalid or `GUEST` name, 404 `No such user "x"`,
    ///   400 `Invalid or missing ttl` for a TTL below 1 second (Sync Gateway's checks, in its order).
    public func createSession(for username: String, ttl: TimeInterval = Session.defaultTTL) throws(GatewayError)
        -> Session
    {
        guard !username.isEmpty, username != PrincipalName.guest, PrincipalName.isValid(username) else {
            throw .badRequest("Invalid or missing user name")
        }
        guard try store.user(named: username) != nil else { throw .notFound("No such user \"\(username)\"") }
        guard ttl >= 1, ttl.isFinite else { throw .badRequest("Invalid or missing ttl") }
        let session = Session(username: username, ttl: ttl, now: now())
        try store.putSession(session)
        return session
    }

    // MARK: - Looking up

    /// The live session with this ID; `nil` for malformed, unknown or expired IDs (expired sessions are deleted).
    public func session(id: String) throws(GatewayError) -> Session? {
        guard Session.isWellFormedID(id) else { return nil }
        return try live(try store.session(id: id), id: id)
    }

    /// ``session(id:)``, the store's read awaited: a store across a network holds no thread while it answers.
    public func fetchSession(id: String) async throws(GatewayError) -> Session? {
        guard Session.isWellFormedID(id) else { return nil }
        return try live(try await store.fetchSession(id: id), id: id)
    }

    /// The session read for `id` when it is that session and has not expired (an expired one is deleted).
    private func live(_ session: Session?, id: String) throws(GatewayError) -> Session? {
        guard let session, ConstantTime.equals(session.id, id) else { return nil }
        guard !session.isExpired(at: now()) else {
            try store.deleteSession(id: session.id)
            return nil
        }
        return session
    }

    /// Slides the expiry of `session` forward by its TTL when more than 10 % of it has elapsed.
    ///
    /// - Returns: The refreshed, stored session (the caller re-sets the cookie), or `nil` when no refresh was needed.
    public func refreshIfNeeded(_ session: Session) throws(GatewayError) -> Session? {
        let now = now()
        guard session.needsRefresh(at: now), !session.isExpired(at: now) else { return nil }
        var refreshed = session
        refreshed.expires = now.addingTimeInterval(session.ttl)
        try store.putSession(refreshed)
        return refreshed
    }

    // MARK: - Deleting

    /// Deletes a session; `false` when there was none.
    @discardableResult
    public func deleteSession(id: String) throws(GatewayError) -> Bool {
        try store.deleteSession(id: id)
    }

    /// Deletes every session of the user (after a password change or when the user is deleted).
    @discardableResult
    public func deleteSessions(forUser username: String) throws(GatewayError) -> Int {
        try store.deleteSessions(forUser: username)
    }
}
