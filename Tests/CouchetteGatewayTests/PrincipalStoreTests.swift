import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// The same behaviour from every ``PrincipalStore``: in memory and in the gateway's SQLite and PostgreSQL storages.
@Suite(.timeLimit(.minutes(5))) struct PrincipalStoreTests {
    enum Kind: String, CaseIterable, Sendable { case memory, sqlite, postgres }

    private func makeStore(_ kind: Kind) async throws -> any PrincipalStore {
        switch kind {
        case .memory: InMemoryPrincipalStore()
        case .sqlite: try await StorageBackend.sqlite.makeStorage(databaseName: "todo")
        case .postgres: try await StorageBackend.postgres.makeStorage(databaseName: "todo")
        }
    }

    @Test(arguments: Kind.allCases)
    func usersRolesAndSessionsRoundTrip(kind: Kind) async throws {
        let store = try await makeStore(kind)
        // On a thread of its own: PostgreSQL calls must not hold a cooperative thread.
        try await offCooperativeThreads {
            let user = User(name: "user1", passwordHash: "$2b$04$x", adminChannels: ["user1"], adminRoles: ["moderator"])
            try store.putUser(user)
            try store.putUser(User(name: "admin"))
            #expect(try store.user(named: "user1") == user)
            #expect(try store.user(named: "nobody") == nil)
            #expect(try store.userNames() == ["admin", "user1"])
            try store.putRole(Role(name: "moderator", adminChannels: ["moderators"]))
            #expect(try store.roleNames() == ["moderator"])
            #expect(try store.allChannels(of: user) == ["user1", "moderators", "!"])

            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let first = Session(username: "user1", now: now)
            let second = Session(username: "user1", now: now)
            try store.putSession(first)
            try store.putSession(second)
            try store.putSession(Session(username: "admin", now: now))
            #expect(try store.session(id: first.id) == first)
            #expect(try store.sessions(forUser: "user1").count == 2)
            #expect(try store.deleteSessions(forUser: "user1") == 2)
            #expect(try store.session(id: second.id) == nil)
            #expect(try store.sessions(forUser: "admin").count == 1)

            #expect(try store.deleteUser(named: "user1"))
            #expect(try !store.deleteUser(named: "user1"))
            #expect(try store.deleteRole(named: "moderator"))
            #expect(try store.role(named: "moderator") == nil)
        }
    }

    @Test func sqlitePrincipalsPersistInAFile() throws {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("principals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var storage = try SQLiteGatewayStorage(location: .file(path), databaseName: "todo")
        let hasher = PasswordHasher(cost: 4)
        try storage.putUser(User(name: "user1", passwordHash: try hasher.hash("pass", allowEmpty: false)))
        storage.close()
        storage = try SQLiteGatewayStorage(location: .file(path), databaseName: "todo")
        defer { storage.close() }
        let authenticator = Authenticator(store: storage, hasher: hasher)
        #expect(try authenticator.authenticate(basic: "user1", password: "pass").name == "user1")
        #expect(throws: GatewayError.self) { try authenticator.authenticate(basic: "user1", password: "wrong") }
    }
}
