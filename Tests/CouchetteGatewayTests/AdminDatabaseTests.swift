import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AdminDatabaseTests

/// The database layer under the admin API, without HTTP: principal sequences, run state, configuration changes,
/// compaction and the raw document form.
@Suite("Admin database operations (no HTTP)", .timeLimit(.minutes(5)))
struct AdminDatabaseTests {
    private static let hasher = PasswordHasher(cost: 4)

    private func rev(_ text: String) -> RevisionID { try! RevisionID(parsing: text) }

    private func makeDatabase(_ config: DatabaseConfig = DatabaseConfig(name: "todo")) throws -> GatewayDatabase {
        try GatewayDatabase(config: config, startTime: 0, hasher: Self.hasher)
    }

    // MARK: - Sequences

    @Test("Principal sequences are durable and never reused by documents, across a restart")
    func principalSequencesSurviveRestart() throws {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("sequences-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var storage = try SQLiteGatewayStorage(location: .file(path), databaseName: "todo")
        let document = try storage.update(documentID: "a") { _ in
            var document = StoredDocument(id: "a")
            _ = try? document.tree.addLocalEdit(parent: nil, body: ["v": 1], deleted: false)
            return document
        }
        #expect(document?.sequence == 1)
        #expect(try storage.nextSequence() == 2)
        #expect(try storage.nextSequence() == 3)
        let uuid = try storage.storageUUID
        #expect(uuid.count == 32 && uuid.allSatisfy(\.isHexDigit), "storage UUID \(uuid)")
        // No orderly close: the allocation is on disk already.
        storage = try SQLiteGatewayStorage(location: .file(path), databaseName: "todo")
        defer { storage.close() }
        #expect(try storage.lastSequence == 3)
        let next = try storage.update(documentID: "b") { _ in
            var document = StoredDocument(id: "b")
            _ = try? document.tree.addLocalEdit(parent: nil, body: ["v": 2], deleted: false)
            return document
        }
        #expect(next?.sequence == 4)
        #expect(try storage.storageUUID == uuid, "the storage UUID survives a restart")
    }

    @Test("Saving users and roles: created vs replaced, unchanged saves take no sequence, deletes clean up")
    func principals() throws {
        let database = try makeDatabase()
        defer { database.close() }
        let principals = database.principals
        #expect(try principals.saveUser(UserUpdate(name: "u1", password: "pass")))
        #expect(try database.storage.user(named: "u1")?.sequence == 1)
        #expect(try !principals.saveUser(UserUpdate(name: "u1")))
        #expect(try database.storage.lastSequence == 1)
        #expect(throws: GatewayError.conflict("Already exists")) {
            try principals.saveUser(UserUpdate(name: "u1", password: "pass"), mustBeNew: true)
        }

        // A password change ends sessions and cached verifications.
        _ = try database.authenticator.authenticate(basic: "u1", password: "pass")
        let session = try principals.createSession(for: "u1")
        #expect(try !principals.saveUser(UserUpdate(name: "u1", password: "other")))
        #expect(try database.storage.session(id: session.id) == nil)
        #expect(throws: GatewayError.self) { try database.authenticator.authenticate(basic: "u1", password: "pass") }
        #expect(try database.authenticator.authenticate(basic: "u1", password: "other").name == "u1")

        #expect(try principals.saveRole(RoleUpdate(name: "r", adminChannels: ["c"])))
        #expect(try !principals.saveRole(RoleUpdate(name: "r", adminChannels: ["c"])))
        #expect(try database.storage.lastSequence == 3)

        let second = try principals.createSession(for: "u1")
        try principals.deleteUser(named: "u1")
        #expect(try database.storage.session(id: second.id) == nil)
        #expect(throws: GatewayError.notFound("missing")) { try principals.deleteUser(named: "u1") }
        #expect(try principals.user(named: "GUEST") == User.defaultGuest)
    }

    // MARK: - Run state

    @Test("State transitions of _offline and _online")
    func stateTransitions() async throws {
        let database = try makeDatabase()
        defer { database.close() }
        try database.takeOnline()
        #expect(database.state == .online)
        try database.takeOffline()
        #expect(database.state == .offline)
        #expect(database.changeNotifier.isClosed)
        try database.takeOffline()
        #expect(database.state == .offline)

        try database.takeOnline(after: .milliseconds(20))
        #expect(database.state == .offline)
        await database.waitUntil(.online)
        #expect(database.state == .online)
        #expect(!database.changeNotifier.isClosed)

        database.setState(.starting)
        #expect(throws: GatewayError.self) { try database.takeOffline() }
        database.setState(.resyncing)
        #expect(throws: GatewayError.self) { try database.takeOnline() }
        try database.takeOffline()
        #expect(database.state == .resyncing)
    }

    @Test("Waiting for a state returns at once when in it, and when cancelled")
    func waitingForState() async throws {
        let database = try makeDatabase()
        defer { database.close() }
        await database.waitUntil(.online)
        let waiter = Task { await database.waitUntil(.resyncing) }
        waiter.cancel()
        await waiter.value
        #expect(database.state == .online)
    }

    // MARK: - Configuration

    @Test("applyConfig: new principals at new sequences, unchanged ones untouched, passwords kept, revs_limit at once")
    func applyConfig() throws {
        var config = DatabaseConfig(name: "todo")
        config.users["user1"] = UserConfig(name: "user1", password: "pass")
        config.roles["r"] = RoleConfig(name: "r", adminChannels: ["c"])
        let database = try makeDatabase(config)
        defer { database.close() }
        #expect(try database.storage.user(named: "user1")?.sequence == 0)

        var next = database.config
        next.users["user1"]?.password = nil
        next.users["user2"] = UserConfig(name: "user2", password: "pass2")
        next.revsLimit = 7
        next.name = "renamed"
        try database.applyConfig(next)
        #expect(try database.storage.lastSequence == 1)
        #expect(try database.storage.user(named: "user2")?.sequence == 1)
        #expect(database.config.users["user1"]?.password == "pass")
        #expect(database.config.name == "todo")
        #expect(database.documents.revsLimit == 7)
        #expect(database.documents.changeNotifier === database.changeNotifier)

        var invalid = database.config
        invalid.users["bad name"] = UserConfig(name: "bad name", password: "pass")
        #expect(throws: GatewayError.self) { try database.applyConfig(invalid) }
        #expect(database.config.users["bad name"] == nil)

        try database.setSyncFunction("function(doc){}")
        #expect(database.config.sync == "function(doc){}")
    }

    @Test("Database configurations parse from request bodies and serialize without passwords")
    func configJSON() throws {
        let config = try DatabaseConfig(
            name: "db",
            parsing: Array(
                #"{"name":"ignored","revs_limit":5,"sync":`function(doc) {}`,"users":{"u":{"password":"p"}}}"#.utf8))
        #expect(config.name == "db")
        #expect(config.revsLimit == 5)
        #expect(config.sync == "function(doc) {}")
        #expect(config.users["u"]?.password == "p")
        #expect(config.jsonValue["users"]?["u"] == ["admin_channels": [], "admin_roles": []])
        #expect(try DatabaseConfig(name: "db", parsing: []) == DatabaseConfig(name: "db"))
        #expect(throws: GatewayError.self) { try DatabaseConfig(name: "db", parsing: Array("[1]".utf8)) }
        #expect(throws: GatewayError.self) { try DatabaseConfig(name: "Bad", parsing: []) }
    }

    // MARK: - Compaction and raw documents

    @Test("Compaction drops non-leaf bodies and empties tombstone bodies, leaving leaves alone")
    func compactTree() throws {
        var tree = RevisionTree(nodes: [
            .init(id: rev("1-a"), parent: nil, isDeleted: false, body: ["v": 1]),
            .init(id: rev("2-b"), parent: rev("1-a"), isDeleted: false, body: ["v": 2]),
            .init(id: rev("3-c"), parent: rev("2-b"), isDeleted: false, body: ["v": 3]),
            .init(id: rev("2-d"), parent: rev("1-a"), isDeleted: true, body: ["left": "over"]),
        ])
        #expect(SQLiteGatewayStorage.compact(&tree) == 3)
        #expect(tree[rev("1-a")]?.body == nil)
        #expect(tree[rev("2-b")]?.body == nil)
        #expect(tree[rev("3-c")]?.body == ["v": 3])
        #expect(tree[rev("2-d")]?.body == [:])
        #expect(SQLiteGatewayStorage.compact(&tree) == 0)
    }

    @Test("Raw flags: deleted, newer than the winner, conflict, branched")
    func rawFlags() {
        let conflicted = RevisionTree(nodes: [
            .init(id: rev("1-a"), parent: nil, isDeleted: false, body: nil),
            .init(id: rev("2-b"), parent: rev("1-a"), isDeleted: false, body: [:]),
            .init(id: rev("2-c"), parent: rev("1-a"), isDeleted: false, body: [:]),
        ])
        #expect(RawDocumentJSON.flags(conflicted) == RawDocumentJSON.conflictFlag | RawDocumentJSON.branchedFlag)
        let deletedLonger = RevisionTree(nodes: [
            .init(id: rev("1-a"), parent: nil, isDeleted: false, body: nil),
            .init(id: rev("2-b"), parent: rev("1-a"), isDeleted: false, body: [:]),
            .init(id: rev("2-c"), parent: rev("1-a"), isDeleted: false, body: nil),
            .init(id: rev("3-d"), parent: rev("2-c"), isDeleted: true, body: [:]),
        ])
        #expect(
            RawDocumentJSON.flags(deletedLonger)
                == RawDocumentJSON.newerThanWinnerFlag | RawDocumentJSON.branchedFlag)
        let deleted = RevisionTree(nodes: [.init(id: rev("1-a"), parent: nil, isDeleted: true, body: [:])])
        #expect(RawDocumentJSON.flags(deleted) == RawDocumentJSON.deletedFlag)
    }
}
