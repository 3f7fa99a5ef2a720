import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - LoginThrottleTests

/// Password guessing: failures are throttled per name and per address (429 with `Retry-After`), a signed-in user is
/// not locked out, unknown names cost a bcrypt verification like wrong passwords, and bcrypt runs on its own pool.
@Suite("Auth: login throttling and guessing", .timeLimit(.minutes(5)))
struct LoginThrottleTests {
    /// A clock tests move by hand.
    final class ManualClock: Sendable {
        private let offset = Mutex(Duration.zero)
        private let start = ContinuousClock.now
        func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
        var closure: @Sendable () -> ContinuousClock.Instant {
            { [self] in start.advanced(by: offset.withLock { $0 }) }
        }
    }

    @Test("A name is throttled after its burst of failures and refills one attempt per interval")
    func userBucket() {
        let clock = ManualClock()
        let throttle = LoginThrottle(
            perUser: .init(burst: 3, refillInterval: .seconds(6)), perAddress: .init(burst: 100, refillInterval: .seconds(1)),
            now: clock.closure)
        for _ in 0..<3 {
            #expect(throttle.delay(user: "alice", address: "10.0.0.1") == nil)
            throttle.recordFailure(user: "alice", address: "10.0.0.1")
        }
        let wait = throttle.delay(user: "alice", address: "10.0.0.2")
        #expect(wait == .seconds(6), "another address does not help: the name is throttled")
        #expect(throttle.delay(user: "bob", address: "10.0.0.1") == nil, "other names are not")
        clock.advance(.seconds(3))
        #expect(throttle.delay(user: "alice", address: nil) == .seconds(3))
        clock.advance(.seconds(3))
        #expect(throttle.delay(user: "alice", address: nil) == nil)
    }

    @Test("An address is throttled after its burst of failures, whatever names it tries")
    func addressBucket() {
        let clock = ManualClock()
        let throttle = LoginThrottle(
            perUser: .init(burst: 100, refillInterval: .seconds(6)), perAddress: .init(burst: 5, refillInterval: .seconds(2)),
            now: clock.closure)
        for index in 0..<5 { throttle.recordFailure(user: "name\(index)", address: "10.0.0.9") }
        #expect(throttle.delay(user: "fresh", address: "10.0.0.9") == .seconds(2))
        #expect(throttle.delay(user: "fresh", address: "10.0.0.8") == nil)
    }

    @Test("An unknown, disabled or password-less name costs one bcrypt verification, like a wrong password")
    func unknownNamesCostAVerification() async throws {
        let store = InMemoryPrincipalStore()
        let hasher = AuthCountingHasher()
        store.putUser(User(name: "user1", passwordHash: try hasher.hash("pass")))
        store.putUser(User(name: "off", passwordHash: try hasher.hash("pass"), disabled: true))
        store.putUser(User(name: "nopass"))
        let auth = Authenticator(store: store, hasher: hasher)
        for name in ["user1", "nobody", "off", "nopass", "GUEST"] {
            let before = hasher.verifyCount
            await #expect(throws: GatewayError.unauthorized("Invalid login")) {
                try await auth.authenticate(basic: name, password: "wrong", from: "127.0.0.1")
            }
            #expect(hasher.verifyCount == before + 1, "\(name)")
        }
    }

    @Test("Verifications run on the verifier's own threads, not on Swift's cooperative pool")
    func verificationsRunOnThePool() async throws {
        final class ThreadRecordingHasher: PasswordHashing, Sendable {
            let names = Mutex<[String]>([])
            let inner = PasswordHasher(cost: 4)
            func hash(_ password: String, allowEmpty: Bool) throws(GatewayError) -> String {
                try inner.hash(password, allowEmpty: allowEmpty)
            }
            func verify(_ password: String, against hash: String) -> Bool {
                let name = Thread.current.name ?? ""
                names.withLock { $0.append(name) }
                return inner.verify(password, against: hash)
            }
        }
        let hasher = ThreadRecordingHasher()
        let store = InMemoryPrincipalStore()
        store.putUser(User(name: "user1", passwordHash: try hasher.hash("pass")))
        let auth = Authenticator(store: store, hasher: hasher, verifier: PasswordVerifier(threads: 1))
        _ = try await auth.authenticate(basic: "user1", password: "pass", from: nil)
        let names = hasher.names.withLock { $0 }
        #expect(names.count == 1 && names.allSatisfy { $0.hasPrefix("TP-") }, "\(names)")
    }

    @Test("Over HTTP: the 11th wrong password is 429 with Retry-After; a signed-in user still gets in")
    func throttledOverHTTP() async throws {
        let database = DatabaseConfig(name: "db", users: ["alice": UserConfig(name: "alice", password: "right", adminChannels: ["*"])])
        // The default burst, refilled slowly: on a loaded machine bcrypt alone would refill the bucket.
        let slow = (LoginThrottle.Policy(burst: 10, refillInterval: .seconds(600)), LoginThrottle.Policy.perAddress)
        try await LoginThrottle.$defaultPolicies.withValue(slow) {
        try await GatewayFixture.withRunningGateway(GatewayFixture.config(databases: [database])) { client, ports in
            let port = ports.publicPort
            #expect(try await client.send(port: port, path: "/db/", user: ("alice", "right")).status == 200)
            for attempt in 0..<10 {
                let reply = try await client.send(port: port, path: "/db/", user: ("alice", "guess\(attempt)"))
                #expect(reply.status == 401, "attempt \(attempt)")
            }
            let throttled = try await client.send(port: port, path: "/db/", user: ("alice", "guess10"))
            #expect(throttled.status == 429, "\(throttled.text)")
            let retryAfter = try #require(throttled.header("Retry-After").flatMap(Int.init))
            #expect((1...600).contains(retryAfter))
            // The password verified before is still accepted: guessers cannot lock the user out.
            #expect(try await client.send(port: port, path: "/db/", user: ("alice", "right")).status == 200)
            // The cookie login is throttled the same way.
            let login = try await client.send(
                "POST", port: port, path: "/db/_session", json: ["name": "alice", "password": "guess11"])
            #expect(login.status == 429)
            // Failures are answered after the failure delay.
            let start = ContinuousClock.now
            #expect(try await client.send(port: port, path: "/db/", user: ("alice", "guess12")).status == 429)
            #expect(ContinuousClock.now - start >= .milliseconds(250))
        }
        }
    }
}
