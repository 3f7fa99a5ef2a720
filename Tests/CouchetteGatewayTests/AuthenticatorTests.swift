import Foundation
import Testing

@testable import CouchetteGateway
import CouchetteCore

// MARK: - CountingHasher

/// bcrypt at cost 4, counting calls so tests can tell when bcrypt ran.
final class AuthCountingHasher: PasswordHashing, @unchecked Sendable {
    private let lock = NSLock()
    private let hasher = PasswordHasher(cost: 4)
    private var hashes = 0
    private var verifications = 0

    var hashCount: Int { lock.withLock { hashes } }
    var verifyCount: Int { lock.withLock { verifications } }

    func hash(_ password: String, allowEmpty: Bool) throws(GatewayError) -> String {
        lock.withLock { hashes += 1 }
        return try hasher.hash(password, allowEmpty: allowEmpty)
    }

    func verify(_ password: String, against hash: String) -> Bool {
        lock.withLock { verifications += 1 }
        return hasher.verify(password, against: hash)
    }
}

// MARK: - AuthenticatorTests

@Suite("Auth: authenticator", .timeLimit(.minutes(5)))
struct AuthenticatorTests {
    let store: any PrincipalStore = InMemoryPrincipalStore()
    let hasher = AuthCountingHasher()
    let clock = AuthTestClock()
    let auth: Authenticator

    init() throws {
        auth = Authenticator(store: store, hasher: hasher, now: clock.closure)
        try store.putUser(User(name: "user1", passwordHash: try hasher.hash("pass"), adminChannels: ["user1"]))
        try store.putUser(User(name: "off", passwordHash: try hasher.hash("pass"), disabled: true))
        try store.putUser(User(name: "nopass"))
    }

    static let invalidLogin = GatewayError.unauthorized("Invalid login")

    @Test("Basic authentication outcomes")
    func basic() throws {
        #expect(try auth.authenticate(basic: "user1", password: "pass").name == "user1")
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "user1", password: "wrong") }
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "nobody", password: "pass") }
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "off", password: "pass") }
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "nopass", password: "") }
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "GUEST", password: "") }
        do {
            _ = try auth.authenticate(basic: "user1", password: "wrong")
        } catch {
            #expect(error.statusCode == 401)
            #expect(JSONRenderer().response(for: error).headers[.wwwAuthenticate] == #"Basic realm="Couchbase Sync Gateway""#)
        }
    }

    @Test("Successful verifications are cached; failures and password changes are not trusted")
    func cache() throws {
        let base = hasher.verifyCount
        _ = try auth.authenticate(basic: "user1", password: "pass")
        #expect(hasher.verifyCount == base + 1)
        _ = try auth.authenticate(basic: "user1", password: "pass")
        _ = try auth.authenticate(basic: "user1", password: "pass")
        #expect(hasher.verifyCount == base + 1)

        // A wrong password is not a cache hit: bcrypt runs and fails.
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "user1", password: "pas") }
        #expect(hasher.verifyCount == base + 2)

        // Changing the password invalidates the cached verification.
        var user = try #require(try store.user(named: "user1"))
        user.passwordHash = try hasher.hash("new-pass")
        try store.putUser(user)
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "user1", password: "pass") }
        #expect(hasher.verifyCount == base + 3)
        _ = try auth.authenticate(basic: "user1", password: "new-pass")
        _ = try auth.authenticate(basic: "user1", password: "new-pass")
        #expect(hasher.verifyCount == base + 4)

        // Disabling the user wins over the cache.
        user = try #require(try store.user(named: "user1"))
        user.disabled = true
        try store.putUser(user)
        #expect(throws: Self.invalidLogin) { try auth.authenticate(basic: "user1", password: "new-pass") }

        auth.invalidateCachedCredentials(forUser: "user1")
        #expect(auth.verificationCache.count == 0)
    }

    @Test("Session authentication")
    func sessions() async throws {
        let session = try auth.sessions.createSession(for: "user1", ttl: 100)
        #expect(try await auth.authenticate(sessionID: session.id)?.name == "user1")
        #expect(try await auth.authenticate(sessionID: Session.makeID()) == nil)
        #expect(try await auth.authenticate(sessionID: "garbage") == nil)

        var user = try #require(try store.user(named: "user1"))
        user.disabled = true
        try store.putUser(user)
        #expect(try await auth.authenticate(sessionID: session.id) == nil)
        user.disabled = false
        try store.putUser(user)
        #expect(try await auth.authenticate(sessionID: session.id) != nil)

        clock.advance(by: 100)
        #expect(try await auth.authenticate(sessionID: session.id) == nil)

        let orphan = try auth.sessions.createSession(for: "user1")
        try store.deleteUser(named: "user1")
        #expect(try await auth.authenticate(sessionID: orphan.id) == nil)
    }

    @Test("GUEST is disabled by default, enabled via config")
    func guest() async throws {
        #expect(try await auth.guest() == nil)
        try store.putUser(User.defaultGuest)
        #expect(try await auth.guest() == nil)
        try PrincipalConfigLoader(hasher: hasher).apply(
            users: ["GUEST": UserConfig(name: "GUEST", adminChannels: ["public"])],
            roles: [:],
            allowEmptyPassword: false,
            to: store
        )
        let guest = try #require(try await auth.guest())
        #expect(guest.adminChannels == ["public"])
        #expect(try store.allChannels(of: guest) == ["!", "public"])
    }

    @Test(
        "Malformed Authorization headers parse to nil",
        arguments: [
            "", "Basic", "Basic ", "Bearer dXNlcjE6cGFzcw==", "Basic !!!notbase64", "Basic dXNlcjE=",  // "user1"
            "Basic OnBhc3M=",  // ":pass"
            "Basic //79",  // invalid UTF-8
            "Digest username=\"user1\"",
        ]
    )
    func malformedHeaders(header: String) throws {
        #expect(BasicCredentials(authorization: header) == nil)
        #expect(try auth.authenticate(authorization: header) == nil)
    }

    @Test("Well-formed Authorization headers")
    func headers() throws {
        let encoded = Data("user1:pa:ss".utf8).base64EncodedString()
        #expect(
            Authenticator.basicCredentials(fromAuthorization: "Basic \(encoded)")
                == BasicCredentials(username: "user1", password: "pa:ss")
        )
        #expect(BasicCredentials(authorization: "basic  \(encoded) ")?.password == "pa:ss")
        #expect(BasicCredentials(authorization: "BASIC dXNlcjE6")?.password == "")
        let good = "Basic " + Data("user1:pass".utf8).base64EncodedString()
        #expect(try auth.authenticate(authorization: good)?.name == "user1")
        let bad = "Basic " + Data("user1:nope".utf8).base64EncodedString()
        #expect(throws: Self.invalidLogin) { try auth.authenticate(authorization: bad) }
    }
}
