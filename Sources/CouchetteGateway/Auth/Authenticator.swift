import CouchetteCore
import Foundation
import Synchronization

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
/// `PasswordVerificationCache`); a changed password hash invalidates the entry. Over HTTP the asynchronous
/// ``authenticate(basic:password:from:)`` runs bcrypt on the ``PasswordVerifier`` pool and throttles failures per
/// user and per client address (``LoginThrottle``, 429). An unknown, disabled or password-less user is checked
/// against a dummy hash of the same cost, so the time an answer takes does not tell which names exist.
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

    /// Failed logins per user name and client address.
    public let throttle: LoginThrottle

    /// Where asynchronous verifications run.
    public let verifier: PasswordVerifier

    /// A hash of a random password, made on first use with ``hasher``: what names that cannot log in are checked against.
    private let dummyHash = DummyHashBox()

    // MARK: - Initialiser

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - store: The principal store.
    ///   - hasher: The password hasher; bcrypt with the default cost by default.
    ///   - now: The clock used for session expiry.
    ///   - throttle: The failed-login throttle.
    ///   - verifier: The pool asynchronous verifications run on.
    public init(
        store: any PrincipalStore,
        hasher: any PasswordHashing = PasswordHasher(),
        now: @escaping @Sendable () -> Date = { Date() },
        throttle: LoginThrottle = LoginThrottle(),
        verifier: PasswordVerifier = .shared
    ) {
        self.store = store
        self.hasher = hasher
        self.sessions = SessionManager(store: store, now: now)
        self.verificationCache = PasswordVerificationCache()
        self.throttle = throttle
        self.verifier = verifier
    }

    // MARK: - Basic authentication

    /// The user whose name and password these are, verified on the calling thread and not throttled (for tools
    /// and tests; HTTP requests use ``authenticate(basic:password:from:)``).
    ///
    /// - Throws: 401 `Invalid login` (with `WWW-Authenticate`) for an unknown user, a disabled user, a user without
    ///   a password (including GUEST) or a wrong password; store errors as they are.
    public func authenticate(basic username: String, password: String) throws(GatewayError) -> User {
        switch try candidate(try store.user(named: username), named: username, password: password) {
        case .verified(let user):
            return user
        case .unverified(let user, let hash):
            return try conclude(user, password: password, hash: hash, matches: hasher.verify(password, against: hash))
        }
    }

    /// The user whose name and password these are, as an HTTP request from `address` presents them: bcrypt runs on
    /// the ``verifier``'s pool, and failures are throttled.
    ///
    /// - Throws: 429 `Too many failed login attempts` (with `Retry-After`) while the name or the address is
    ///   throttled, unless the password was verified before; otherwise as ``authenticate(basic:password:)``. Either
    ///   failure is answered after the throttle's ``LoginThrottle/failureDelay``.
    public func authenticate(basic username: String, password: String, from address: String?) async throws(GatewayError)
        -> User
    {
        let (user, hash): (User?, String)
        switch try candidate(try await store.fetchUser(named: username), named: username, password: password) {
        case .verified(let user): return user
        case .unverified(let candidate, let candidateHash): (user, hash) = (candidate, candidateHash)
        }
        if let wait = throttle.delay(user: username, address: address) {
            try? await Task.sleep(for: throttle.failureDelay)
            throw .tooManyRequests("Too many failed login attempts", retryAfter: wait)
        }
        let matches = await verifier.verify(password, against: hash, with: hasher)
        do {
            return try conclude(user, password: password, hash: hash, matches: matches)
        } catch {
            throttle.recordFailure(user: username, address: address)
            try? await Task.sleep(for: throttle.failureDelay)
            throw error
        }
    }

    /// What checking a name and password needs: nothing more when the password was verified before; otherwise
    /// the user (nil when it cannot log in) and the hash to check against (a dummy one for such names).
    private enum Candidate {
        case verified(User)
        case unverified(User?, hash: String)
    }

    /// - Parameter stored: The user of that name, as read from the store.
    private func candidate(_ stored: User?, named username: String, password: String) throws(GatewayError) -> Candidate {
        guard let user = stored, !user.disabled, !user.isGuest,
            let passwordHash = user.passwordHash
        else { return .unverified(nil, hash: try dummyPasswordHash()) }
        if verificationCache.contains(username: username, passwordHash: passwordHash, password: password) {
            return .verified(user)
        }
        return .unverified(user, hash: passwordHash)
    }

    private func conclude(_ user: User?, password: String, hash: String, matches: Bool) throws(GatewayError) -> User {
        guard let user, matches else { throw .unauthorized("Invalid login") }
        verificationCache.insert(username: user.name, passwordHash: hash, password: password)
        return user
    }

    /// The dummy hash, made once.
    private func dummyPasswordHash() throws(GatewayError) -> String {
        if let hash = dummyHash.value.withLock({ $0 }) { return hash }
        let hash = try hasher.hash(Session.makeID(), allowEmpty: false)
        return dummyHash.value.withLock { stored in
            if let stored { return stored }
            stored = hash
            return hash
        }
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

    /// Authenticates an `Authorization` header value of a request from `address`, as
    /// ``authenticate(basic:password:from:)`` does.
    public func authenticate(authorization header: String, from address: String?) async throws(GatewayError) -> User? {
        guard let credentials = BasicCredentials(authorization: header) else { return nil }
        return try await authenticate(basic: credentials.username, password: credentials.password, from: address)
    }

    /// Parses an `Authorization: Basic …` value; see ``BasicCredentials/init(authorization:)``.
    public static func basicCredentials(fromAuthorization header: String) -> BasicCredentials? {
        BasicCredentials(authorization: header)
    }

    // MARK: - Sessions

    /// The user of a live session; `nil` for unknown, malformed or expired IDs and for disabled or deleted users.
    public func authenticate(sessionID: String) async throws(GatewayError) -> User? {
        guard let session = try await sessions.fetchSession(id: sessionID),
            let user = try await store.fetchUser(named: session.username), !user.disabled
        else { return nil }
        return user
    }

    // MARK: - Guest

    /// The GUEST user when it is enabled, else `nil` (GUEST is disabled unless the configuration enables it).
    public func guest() async throws(GatewayError) -> User? {
        guard let guest = try await store.fetchUser(named: PrincipalName.guest), !guest.disabled else { return nil }
        return guest
    }

    // MARK: - Cache

    /// Forgets cached verifications of the user (also done implicitly when its password hash changes).
    public func invalidateCachedCredentials(forUser username: String) {
        verificationCache.remove(username: username)
    }
}

/// The lazily made dummy hash of an ``Authenticator``, shared by its copies.
private final class DummyHashBox: Sendable {
    let value = Mutex<String?>(nil)
}
