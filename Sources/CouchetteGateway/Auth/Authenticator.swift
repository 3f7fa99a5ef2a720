import Foundation

// MARK: - Authenticator

/// Who is making a request: Basic credentials, a session cookie, or the GUEST user (spec: gateway-rest-api.md §1.3).
///
/// Pure logic over a ``PrincipalStore`` and a ``PasswordHashing``; the HTTP layer calls it in order:
///
/// ```swift
/// let auth = Authenticator(store: store)
/// if let credentials = BasicCredentials(authorization: header) {
///     user = try auth.authenticate(basic: credentials.username, password: credentials.password)   // or 401
/// } else if let id = cookie, let sessionUser = try auth.authenticate(sessionID: id) {
///     user = sessionUser
/// } else {
///     user = try auth.guest()          // nil: GUEST disabled, endpoints needing a user answer 401
/// }
/// ```
///
/// bcrypt is slow by design, so successful Basic verifications are cached per user (see
/// `PasswordVerificationCache`); a changed password hash invalidates the entry.
public struct Authenticator: Sendable {
    // MARK: - Properties

    /// Where users and sessions are kept.
    public let store: any PrincipalStore

    /// Verifies passwords.
    public let hasher: any PasswordHashing

    /// Session lookup, with the same store and clock.
    public let sessions: SessionManager

    /// Successful Basic verifications.
    let verificationCache: PasswordVerificationCache

    // MARK: - Initialiser

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - store: The principal store.
    ///   - hasher: The password hasher; bcrypt with the default cost by default.
    ///   - now: The clock used for session expiry.
    public init(
        store: any PrincipalStore,
        hasher: any PasswordHashing = PasswordHasher(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.hasher = hasher
        self.sessions = SessionManager(store: store, now: now)
        self.verificationCache = PasswordVerificationCache()
    }

    // MARK: - Basic authentication

    /// The user whose name and password these are.
    ///
    /// - Throws: 401 `Invalid login` (with `WWW-Authenticate`) for an unknown user, a disabled user, a user without
    ///   a password (including GUEST) or a wrong password; store errors as they are.
    public func authenticate(basic username: String, password: String) throws(GatewayError) -> User {
        guard let user = try store.user(named: username), !user.disabled, !user.isGuest,
            let passwordHash = user.passwordHash
        else { throw .unauthorized("Invalid login") }
        if verificationCache.contains(username: username, passwordHash: passwordHash, password: password) {
            return user
        }
        guard hasher.verify(password, against: passwordHash) else {
            throw .unauthorized("Invalid login")
        }
        verificationCache.insert(username: username, passwordHash: passwordHash, password: password)
        return user
    }

    /// Authenticates an `Authorization` header value.
    ///
    /// - Returns: The user, or `nil` when the header is not well-formed Basic credentials (the request then falls
    ///   through to the cookie and GUEST).
    /// - Throws: 401 `Invalid login` for well-formed but wrong credentials.
    public func authenticate(authorization header: String) throws(GatewayError) -> User? {
        guard let credentials = BasicCredentials(authorization: header) else { return nil }
        return try authenticate(basic: credentials.username, password: credentials.password)
    }

    /// Parses an `Authorization: Basic …` value; see ``BasicCredentials/init(authorization:)``.
    public static func basicCredentials(fromAuthorization header: String) -> BasicCredentials? {
        BasicCredentials(authorization: header)
    }

    // MARK: - Sessions

    /// The user of a live session; `nil` for unknown, malformed or expired IDs and for disabled or deleted users.
    public func authenticate(sessionID: String) throws(GatewayError) -> User? {
        guard let session = try sessions.session(id: sessionID),
            let user = try store.user(named: session.username), !user.disabled
        else { return nil }
        return user
    }

    // MARK: - Guest

    /// The GUEST user when it is enabled, else `nil` (GUEST is disabled unless the configuration enables it).
    public func guest() throws(GatewayError) -> User? {
        guard let guest = try store.user(named: PrincipalName.guest), !guest.disabled else { return nil }
        return guest
    }

    // MARK: - Cache

    /// Forgets cached verifications of the user (also done implicitly when its password hash changes).
    public func invalidateCachedCredentials(forUser username: String) {
        verificationCache.remove(username: username)
    }
}
