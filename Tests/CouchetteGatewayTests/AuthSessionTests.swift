import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - TestClock

/// A settable clock for session tests: no sleeps.
final class AuthTestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = start
    }

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }

    /// A `now` closure reading this clock.
    var closure: @Sendable () -> Date { { self.now } }
}

// MARK: - AuthSessionTests

@Suite("Auth: sessions", .timeLimit(.minutes(5)))
struct AuthSessionTests {
    let store: any PrincipalStore = InMemoryPrincipalStore()
    let clock = AuthTestClock()
    var sessions: SessionManager { SessionManager(store: store, now: clock.closure) }

    init() throws {
        try store.putUser(User(name: "user1", passwordHash: "$2b$04$x"))
    }

    @Test("Session IDs are 40 hex characters and unique")
    func ids() {
        let ids = (0..<100).map { _ in Session.makeID() }
        #expect(Set(ids).count == 100)
        for id in ids {
            #expect(id.count == 40 && Session.isWellFormedID(id))
            #expect(id.allSatisfy { "0123456789abcdef".contains($0) })
        }
        #expect(!Session.isWellFormedID("xyz"))
        #expect(!Session.isWellFormedID(String(repeating: "g", count: 40)))
        #expect(Session.cookieName == "SyncGatewaySession")
        #expect(Session.defaultTTL == 86400)
    }

    @Test("A session lives for its TTL, then lookups ignore and delete it")
    func expiry() throws {
        let session = try sessions.createSession(for: "user1")
        #expect(session.expires == clock.now.addingTimeInterval(86400))
        #expect(try sessions.session(id: session.id) == session)
        clock.advance(by: 86399)
        #expect(try sessions.session(id: session.id) != nil)
        clock.advance(by: 1)
        #expect(try sessions.session(id: session.id) == nil)
        #expect(try store.session(id: session.id) == nil)
    }

    @Test("Custom TTL and creation errors")
    func creation() throws {
        let short = try sessions.createSession(for: "user1", ttl: 60)
        clock.advance(by: 61)
        #expect(try sessions.session(id: short.id) == nil)
        #expect(throws: GatewayError.notFound(#"No such user "nobody""#)) { try sessions.createSession(for: "nobody") }
        #expect(throws: GatewayError.badRequest("Invalid or missing ttl")) {
            try sessions.createSession(for: "user1", ttl: 0)
        }
        #expect(throws: GatewayError.self) { try sessions.createSession(for: "GUEST") }
        #expect(throws: GatewayError.self) { try sessions.createSession(for: "") }
    }

    @Test("Unknown and malformed IDs find nothing")
    func unknown() throws {
        #expect(try sessions.session(id: Session.makeID()) == nil)
        #expect(try sessions.session(id: "") == nil)
        #expect(try sessions.session(id: "not-a-session") == nil)
    }

    @Test("Sliding expiry after 10 % of the TTL")
    func refresh() throws {
        let session = try sessions.createSession(for: "user1", ttl: 1000)
        clock.advance(by: 50)
        #expect(try sessions.refreshIfNeeded(session) == nil)
        clock.advance(by: 51)
        let refreshed = try #require(try sessions.refreshIfNeeded(session))
        #expect(refreshed.expires == clock.now.addingTimeInterval(1000))
        #expect(try store.session(id: session.id)?.expires == refreshed.expires)
    }

    @Test("Deleting one session or all of a user's")
    func deleting() throws {
        try store.putUser(User(name: "user2"))
        let a = try sessions.createSession(for: "user1")
        let b = try sessions.createSession(for: "user1")
        let c = try sessions.createSession(for: "user2")
        #expect(try sessions.deleteSession(id: a.id))
        #expect(try !sessions.deleteSession(id: a.id))
        #expect(try sessions.deleteSessions(forUser: "user1") == 1)
        #expect(try sessions.session(id: b.id) == nil)
        #expect(try sessions.session(id: c.id) != nil)
    }

    @Test("Session descriptions hide the ID")
    func redaction() throws {
        let session = try sessions.createSession(for: "user1")
        var dumped = ""
        dump(session, to: &dumped)
        #expect(!session.description.contains(session.id) && !dumped.contains(session.id))
    }
}
