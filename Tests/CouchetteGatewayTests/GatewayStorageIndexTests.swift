import CouchetteCore
import CouchetteSQLite
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// The channel and grant indexes of the storages: rows follow documents in and out of channels, grants keep their
/// first sequence, purges leave nothing behind, PostgreSQL's feeds are SQLite's, and older SQLite databases migrate.
@Suite(.timeLimit(.minutes(5))) struct GatewayStorageIndexTests {
    /// Stores a new revision of `id` in `channels`, granting `grants` (channel grants by principal) and no role.
    @discardableResult
    private func write(
        _ storage: any GatewayStorage, _ id: String, channels: Set<String>, grants: [String: Set<String>] = [:]
    ) throws(GatewayError) -> StoredDocument? {
        try storage.update(documentID: id) { current in
            var document = current ?? StoredDocument(id: id)
            guard let revision = try? document.tree.addLocalEdit(parent: document.winner?.id, body: [:], deleted: false)
            else { return nil }
            document.channels[revision] = channels
            document.access = grants
            document.roleAccess = [:]
            return document
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aDocumentLeavingAndRejoiningAChannelHasOneEntryOnItsFeed(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "db") { storage in
            try write(storage, "doc", channels: ["a"])  // 1
            try write(storage, "doc", channels: ["b"])  // 2: leaves a
            #expect(try storage.document(id: "doc")?.channelRemovals == ["a": 2])
            try write(storage, "doc", channels: ["a", "b"])  // 3: back in a
            #expect(try storage.document(id: "doc")?.channelRemovals == [:])
            var feed = try storage.changes(inChannels: ["a"], since: 0, limit: nil)
            #expect(feed.map(\.sequence) == [3])
            #expect(feed.first?.removedFrom == [])
            try write(storage, "doc", channels: ["b"])  // 4: leaves a again
            feed = try storage.changes(inChannels: ["a"], since: 0, limit: nil)
            #expect(feed.map(\.sequence) == [4])
            #expect(feed.first?.removedFrom == ["a"])
            // A reader of a and b sees the document still in b, once.
            feed = try storage.changes(inChannels: ["a", "b"], since: 0, limit: nil)
            #expect(feed.map(\.sequence) == [4])
            #expect(feed.first?.removedFrom == [])
            // Since the removal, nothing; between, the removal.
            #expect(try storage.changes(inChannels: ["a"], since: 4, limit: nil).isEmpty)
            #expect(try storage.changes(inChannels: ["a"], since: 3, limit: nil).map(\.removedFrom) == [["a"]])
        }
    }

    @Test(
        "Reading by sequence (users with many channels) gives what the per-channel query gives",
        arguments: [StorageBackend.sqlite, .sqliteFile])
    func readingBySequenceMatchesThePerChannelQuery(backend: StorageBackend) async throws {
        for seed in UInt64(1)...12 {
            var random = SplitMix64(state: seed)
            let location = try await backend.newLocation()
            let storage = try SQLiteGatewayStorage(location: location, databaseName: "db")
            defer {
                storage.close()
                StorageBackend.removeFiles(of: location)
            }
            let channelNames = (0..<8).map { "c\($0)" }
            for _ in 0..<150 {
                let id = "doc\(random.next() % 25)"
                let channels = Set(channelNames.filter { _ in random.next() % 3 == 0 })
                try write(storage, id, channels: channels)
            }
            let last = try storage.lastSequence
            for _ in 0..<40 {
                let selected = Set(channelNames.filter { _ in random.next() % 2 == 0 })
                guard !selected.isEmpty else { continue }
                let since = random.next() % (last + 2)
                let limit: Int? = random.next() % 3 == 0 ? nil : Int(random.next() % 10) + 1
                let expected = try storage.changes(inChannels: selected, since: since, limit: limit)
                let bySequence = try storage.changesBySequence(inChannels: selected, since: since, limit: limit)
                #expect(bySequence == expected, "seed \(seed), channels \(selected.sorted()), since \(since), limit \(String(describing: limit))")
            }
        }
    }

    @Test("PostgreSQL gives the feeds, documents and grants SQLite gives, for random writes, batches and purges")
    func postgresMatchesSQLite() async throws {
        // On a thread of its own: hundreds of PostgreSQL round trips must not hold a cooperative thread.
        try await offCooperativeThreads { try self.comparePostgresWithSQLite() }
    }

    private func comparePostgresWithSQLite() throws {
        for seed in UInt64(1)...3 {
            var random = SplitMix64(state: seed)
            let sqlite = try StorageLocation.memory.openStorage(databaseName: "db")
            let postgres = try StorageLocation(parsing: try PostgresServer.shared().createDatabase()).openStorage(databaseName: "db")
            defer {
                sqlite.close()
                postgres.close()
            }
            let channelNames = (0..<6).map { "c\($0)" }
            for _ in 0..<40 {
                let step = random.next() % 10
                let ids = (0..<(step == 0 ? 4 : 1)).map { _ in "doc\(random.next() % 15)" }
                let channels = Set(channelNames.filter { _ in random.next() % 3 == 0 })
                let grants = random.next() % 4 == 0 ? ["user\(random.next() % 3)": Set(channels.prefix(2))] : [:]
                for storage in [sqlite, postgres] {
                    if step == 1 {
                        try storage.purge(documentID: ids[0])
                    } else {
                        // Several documents (sometimes the same one twice) in one batch.
                        try storage.inBatch { storage throws(GatewayError) in
                            for id in ids { try write(storage, id, channels: channels, grants: grants) }
                        }
                    }
                }
            }
            #expect(try postgres.lastSequence == sqlite.lastSequence)
            let last = try sqlite.lastSequence
            #expect(try postgres.changes(since: 0, limit: nil) == sqlite.changes(since: 0, limit: nil))
            #expect(try postgres.documentIDs(from: nil, to: nil, limit: nil) == sqlite.documentIDs(from: nil, to: nil, limit: nil))
            for id in (0..<15).map({ "doc\($0)" }) {
                #expect(try postgres.document(id: id) == sqlite.document(id: id), "seed \(seed) \(id)")
            }
            for user in ["user0", "user1", "user2"] {
                #expect(try postgres.documentChannelGrants(to: user) == sqlite.documentChannelGrants(to: user))
            }
            for _ in 0..<20 {
                let selected = Set(channelNames.filter { _ in random.next() % 2 == 0 })
                let since = random.next() % (last + 2)
                let limit: Int? = random.next() % 3 == 0 ? nil : Int(random.next() % 10) + 1
                #expect(
                    try postgres.changes(inChannels: selected, since: since, limit: limit)
                        == sqlite.changes(inChannels: selected, since: since, limit: limit),
                    "seed \(seed), channels \(selected.sorted()), since \(since)")
            }
        }
    }

    @Test("The index in memory is what a file's tables hold, for random writes, batches, rollbacks and purges")
    func memoryIndexMatchesAFilesTables() async throws {
        try await offCooperativeThreads { try self.compareMemoryIndexWithAFile() }
    }

    private func compareMemoryIndexWithAFile() throws {
        for seed in UInt64(1)...5 {
            var random = SplitMix64(state: seed)
            let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("grants-\(UUID().uuidString)")
            let memory = try SQLiteGatewayStorage(location: .memory, databaseName: "db")
            let file = try SQLiteGatewayStorage(location: .directory(directory), databaseName: "db")
            defer {
                memory.close()
                file.close()
                try? FileManager.default.removeItem(atPath: directory)
            }
            let principals = ["user0", "user1", "user2", "role:r0"]
            let channelNames = (0..<5).map { "c\($0)" }
            for step in 0..<80 {
                let kind = random.next() % 10
                let ids = (0..<(kind < 3 ? 3 : 1)).map { _ in "doc\(random.next() % 12)" }
                var grants: [String: Set<String>] = [:]
                for principal in principals where random.next() % 3 == 0 {
                    grants[principal] = Set(channelNames.filter { _ in random.next() % 3 == 0 })
                }
                let channels = Set(channelNames.filter { _ in random.next() % 3 == 0 })
                for storage in [memory, file] {
                    switch kind {
                    case 0:
                        try storage.purge(documentID: ids[0])
                    case 1:
                        // A batch that fails: its grants are taken back.
                        #expect(throws: GatewayError.self) {
                            try storage.inBatch { storage throws(GatewayError) in
                                for id in ids { try write(storage, id, channels: channels, grants: grants) }
                                // A read inside the batch writes its index rows before it fails.
                                _ = try storage.changes(inChannels: Set(channelNames), since: 0, limit: nil)
                                throw GatewayError.forbidden("rolled back")
                            }
                        }
                    default:
                        // Several documents (sometimes the same one twice) in one batch.
                        try storage.inBatch { storage throws(GatewayError) in
                            for id in ids { try write(storage, id, channels: channels, grants: grants) }
                        }
                    }
                }
                let place = "seed \(seed), step \(step)"
                #expect(try memory.channelRowDescriptions() == file.channelRowDescriptions(), "\(place)")
                #expect(try memory.channelCounts() == file.channelCounts(), "\(place)")
                let selected = Set(channelNames.filter { _ in random.next() % 2 == 0 })
                let since = random.next() % (try file.lastSequence + 2)
                let limit: Int? = random.next() % 3 == 0 ? nil : Int(random.next() % 6) + 1
                let feed = try file.changes(inChannels: selected, since: since, limit: limit)
                #expect(try memory.changes(inChannels: selected, since: since, limit: limit) == feed, "\(place)")
                let bySequence = try memory.changesBySequence(inChannels: selected, since: since, limit: limit)
                #expect(bySequence == feed, "\(place)")
                for principal in principals {
                    #expect(
                        try memory.documentChannelGrants(to: principal) == file.documentChannelGrants(to: principal),
                        "seed \(seed), step \(step), \(principal)")
                    #expect(
                        try memory.documentGrantSources(to: principal) == file.documentGrantSources(to: principal),
                        "seed \(seed), step \(step), \(principal)")
                }
            }
        }
    }

    @Test("A user's cached channels and grant sequences follow the grants documents add and take back, as reloaded")
    func cachedPrincipalsFollowGrants() throws {
        let storage = try SQLiteGatewayStorage(path: ":memory:")
        try storage.putUser(User(name: "u", adminChannels: ["own"], adminRoles: ["r"]))
        try storage.putRole(Role(name: "r", adminChannels: ["shared"]))
        var generator = SplitMix64(state: 25)
        for step in 0..<200 {
            // Loaded (and cached) before each write, so that the write changes the cached entries in place.
            let before = try #require(try storage.user(named: "u"))
            _ = try storage.allChannels(of: before)
            _ = try storage.channelGrantSequences(of: before)
            let grants = Set((0..<10).filter { _ in Bool.random(using: &generator) }.map { "c\($0)" })
            let principal = step % 7 == 0 ? "role:r" : "u"
            try write(storage, "d\(Int.random(in: 0..<4, using: &generator))", channels: [], grants: [principal: grants])
            let cached = try #require(try storage.user(named: "u"))
            let cachedChannels = try storage.allChannels(of: cached)
            let cachedSequences = try storage.channelGrantSequences(of: cached)
            storage.lock.withLock { storage.principalCache.invalidateAll() }
            let reloaded = try #require(try storage.user(named: "u"))
            #expect(cached == reloaded, "step \(step)")
            #expect(cachedChannels == (try storage.allChannels(of: reloaded)), "step \(step)")
            #expect(cachedSequences == (try storage.channelGrantSequences(of: reloaded)), "step \(step)")
        }
    }

    @Test("A user granted more channels between two reads than the cache keeps waiting is reloaded with every one")
    func manyGrantsBetweenReads() throws {
        let storage = try SQLiteGatewayStorage(path: ":memory:")
        try storage.putUser(User(name: "u"))
        let before = try #require(try storage.user(named: "u"))
        _ = try storage.allChannels(of: before)
        let count = PrincipalCache.pendingLimit + 5
        for index in 0..<count { try write(storage, "d\(index)", channels: [], grants: ["u": ["c\(index)"]]) }
        let user = try #require(try storage.user(named: "u"))
        let channels = try storage.allChannels(of: user)
        #expect(channels.count == count + 1)  // and the public channel "!"
        #expect(try storage.channelGrantSequences(of: user)["c\(count - 1)"] == UInt64(count))
    }

    @Test(arguments: StorageBackend.allCases)
    func aPurgedDocumentLeavesNoRowsAndCanBeWrittenAgain(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "db") { storage in
            try write(storage, "doc", channels: ["a"], grants: ["user1": ["a"]])
            try write(storage, "doc", channels: ["b"], grants: ["user1": ["a", "b"]])
            try write(storage, "other", channels: ["a"], grants: ["user1": ["c"]])
            #expect(try storage.purge(documentID: "doc"))
            #expect(try storage.changes(inChannels: ["a", "b"], since: 0, limit: nil).map(\.documentID) == ["other"])
            #expect(try storage.documentChannelGrants(to: "user1") == ["c": 3])
            let again = try #require(try write(storage, "doc", channels: ["a"], grants: ["user1": ["a"]]))
            #expect(again.channelRemovals.isEmpty)
            #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.documentID) == ["other", "doc"])
            #expect(try storage.documentChannelGrants(to: "user1") == ["c": 3, "a": 4])
            #expect(try storage.purge(documentID: "missing") == false)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRepeatedGrantKeepsItsFirstSequenceAndADroppedOneGoes(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "db") { storage in
            try write(storage, "list", channels: [], grants: ["user1": ["x"], "role:moderator": ["x"]])  // 1
            try write(storage, "list", channels: [], grants: ["user1": ["x", "y"]])  // 2
            #expect(try storage.documentChannelGrants(to: "user1") == ["x": 1, "y": 2])
            #expect(try storage.documentChannelGrants(to: "role:moderator") == [:])
            let stored = try #require(try storage.document(id: "list"))
            #expect(stored.grantSequences[DocumentGrant(kind: .channel, principal: "user1", target: "x")] == 1)
            // `_raw` reports each grant's own sequence.
            let raw = RawDocumentJSON.make(stored)
            #expect(raw["_sync"]?["access"] == ["user1": ["x": 1, "y": 2]])
            try write(storage, "list", channels: [], grants: ["user1": ["y"]])  // 3
            #expect(try storage.documentChannelGrants(to: "user1") == ["y": 2])
            // Another document granting the same channel: the earliest sequence counts.
            try write(storage, "other", channels: [], grants: ["user1": ["y"]])  // 4
            #expect(try storage.documentChannelGrants(to: "user1") == ["y": 2])
        }
    }

    /// A batch that fails takes back the grants it made and dropped, though a read inside it saw them: in memory
    /// (``MemoryGrantIndex``'s journal) as in a file's table.
    @Test(arguments: [StorageBackend.sqlite, .sqliteFile])
    func aBatchRolledBackTakesBackItsGrants(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "db") { storage in
            try write(storage, "kept", channels: [], grants: ["user1": ["a"], "user2": ["a"]])  // 1
            #expect(throws: GatewayError.self) {
                try storage.inBatch { storage throws(GatewayError) in
                    try write(storage, "list", channels: [], grants: ["user1": ["b"], "user3": ["b"]])  // 2
                    try write(storage, "kept", channels: [], grants: ["user2": ["a"]])  // 3: drops user1's "a"
                    // A read inside the batch sees the batch's own grants.
                    #expect(try storage.documentChannelGrants(to: "user1") == ["b": 2])
                    #expect(try storage.documentGrantSources(to: "user3").map(\.documentID) == ["list"])
                    throw GatewayError.forbidden("rolled back")
                }
            }
            #expect(try storage.documentChannelGrants(to: "user1") == ["a": 1])
            #expect(try storage.documentChannelGrants(to: "user3") == [:])
            let kept = DocumentGrantSource(
                grant: DocumentGrant(kind: .channel, principal: "user2", target: "a"), sequence: 1, documentID: "kept")
            #expect(try storage.documentGrantSources(to: "user2") == [kept])
            // The next write after the rollback is kept.
            try write(storage, "list", channels: [], grants: ["user1": ["c"]])
            #expect(try storage.documentChannelGrants(to: "user1") == ["a": 1, "c": 4])
        }
    }

    @Test func aWriteFailingHalfwayStoresNothingOfItsDocumentOrItsBatch() throws {
        try FailingChannelStorage.run { storage, _ in try failingWritesStoreNothing(storage) }
    }

    /// Index rows of channel "boom" fail, after the rows of the document's other channels were written.
    private func failingWritesStoreNothing(_ storage: SQLiteGatewayStorage) throws {
        #expect(throws: GatewayError.self) { try write(storage, "alone", channels: ["a", "boom"]) }
        #expect(try storage.document(id: "alone") == nil)
        #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).isEmpty)
        // In a batch, a transform failing leaves the others; a write failing halfway fails the batch.
        func fails(_ body: () throws -> Void) -> Bool {
            do { try body() } catch { return true }
            return false
        }
        var refusedFailed = false
        try storage.inBatch { storage throws(GatewayError) in
            try write(storage, "kept", channels: ["a"])
            refusedFailed = fails { try storage.update(documentID: "refused") { _ throws(GatewayError) in throw .forbidden("no") } }
        }
        #expect(refusedFailed)
        // A batch's index rows are written together before it commits: a refused row fails the whole batch.
        let batchFailed = fails {
            try storage.inBatch { storage throws(GatewayError) in
                try write(storage, "first", channels: ["a"])
                try write(storage, "broken", channels: ["a", "boom"])
                try write(storage, "last", channels: ["a"])
            }
        }
        #expect(batchFailed)
        for id in ["first", "broken", "last", "refused"] { #expect(try storage.document(id: id) == nil) }
        #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.documentID) == ["kept"])
        try write(storage, "after", channels: ["a"])
        #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.documentID) == ["kept", "after"])
    }

    @Test(
        "Reads inside a batch see the index rows its writes recorded; rows written then replaced are never stored",
        arguments: [StorageBackend.sqlite, .sqliteFile])
    func readsInsideABatchSeeItsRows(backend: StorageBackend) async throws {
        let location = try await backend.newLocation()
        let storage = try SQLiteGatewayStorage(location: location, databaseName: "db")
        defer {
            storage.close()
            StorageBackend.removeFiles(of: location)
        }
        try write(storage, "before", channels: ["a"], grants: ["user1": ["a"]])  // 1
        try storage.inBatch { storage throws(GatewayError) in
            try write(storage, "doc", channels: ["a"], grants: ["user1": ["x"]])  // 2
            #expect(try storage.documentChannelGrants(to: "user1") == ["a": 1, "x": 2])
            #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.documentID) == ["before", "doc"])
            try write(storage, "doc", channels: ["b"], grants: ["user1": ["y"]])  // 3: leaves a, x replaced by y
            try write(storage, "other", channels: ["b"])  // 4
        }
        #expect(try storage.documentChannelGrants(to: "user1") == ["a": 1, "y": 3])
        let feed = try storage.changes(inChannels: ["a"], since: 0, limit: nil)
        #expect(feed.map(\.documentID) == ["before", "doc"])
        #expect(feed.last?.removedFrom == ["a"])
        #expect(try storage.changes(inChannels: ["b"], since: 0, limit: nil).map(\.sequence) == [3, 4])
        // Exactly the rows of the final state: nothing of the revision at sequence 2 is left.
        // The channel rows (the `channel_changes` table of a file, ``MemoryChannelIndex`` in memory).
        #expect(try storage.channelRowDescriptions() == ["a@1", "a@3-", "b@3", "b@4"])
        // The grant rows (the `grants` table of a file, ``MemoryGrantIndex`` in memory).
        let sources = try storage.documentGrantSources(to: "user1")
        #expect(sources.map { "\($0.grant.target)@\($0.sequence)" } == ["a@1", "y@3"])
        // Without reads in between, a row inserted and deleted in the same batch is netted out before the write.
        try storage.inBatch { storage throws(GatewayError) in
            try write(storage, "doc", channels: ["c"], grants: ["user1": ["z"]])  // 5: leaves b, c at 5
            try write(storage, "doc", channels: ["d"])  // 6: leaves c (c@5 replaced by c@6), z dropped
        }
        #expect(try storage.channelRowDescriptions() == ["a@1", "a@3-", "b@4", "b@5-", "c@6-", "d@6"])
        #expect(try storage.documentChannelGrants(to: "user1") == ["a": 1])
    }

    @Test func aVersion2DatabaseMigratesWithItsRemovalsAndGrantSequences() throws {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("gateway-v2-\(UUID().uuidString).sqlite3")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try makeVersion2Database(at: path)
        let storage = try SQLiteGatewayStorage(path: path)
        defer { storage.close() }
        let list = try #require(try storage.document(id: "list"))
        #expect(list.currentChannels == ["b"])
        #expect(list.channelRemovals == ["a": 3])
        #expect(list.grantSequences[DocumentGrant(kind: .channel, principal: "user1", target: "b")] == 1)
        #expect(list.grantSequences[DocumentGrant(kind: .role, principal: "user1", target: "moderator")] == 3)
        #expect(try storage.documentChannelGrants(to: "user1") == ["b": 1])
        #expect(try storage.documentRoleGrants(to: "user1") == ["moderator": 3])
        #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.removedFrom) == [["a"]])
        #expect(try storage.changes(inChannels: ["b"], since: 0, limit: nil).map(\.sequence) == [3])
        // Writes after the migration find the migrated rows.
        try write(storage, "list", channels: ["a"], grants: [:])
        #expect(try storage.changes(inChannels: ["a"], since: 0, limit: nil).map(\.removedFrom) == [[]])
        #expect(try storage.changes(inChannels: ["b"], since: 0, limit: nil).map(\.removedFrom) == [["b"]])
        #expect(try storage.documentChannelGrants(to: "user1") == [:])
        #expect(try storage.documentRoleGrants(to: "user1") == [:])
    }

    /// A database as version 2 of the schema wrote it: document "list" at sequence 3, in channel b, having left a
    /// at 3, granting user1 channel b since 1 and role moderator since 3.
    private func makeVersion2Database(at path: String) throws {
        let connection = try Connection(path: path)
        defer { connection.close() }
        try connection.execute(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value);
            CREATE TABLE documents (sequence INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, deleted INTEGER NOT NULL,
                rev TEXT NOT NULL, body BLOB NOT NULL, metadata BLOB NOT NULL);
            CREATE TABLE channel_membership (doc_id TEXT NOT NULL, channel TEXT NOT NULL, sequence INTEGER NOT NULL,
                removed INTEGER NOT NULL, PRIMARY KEY (doc_id, channel)) WITHOUT ROWID;
            CREATE INDEX channel_membership_by_sequence ON channel_membership (channel, sequence);
            CREATE TABLE local_documents (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL);
            CREATE TABLE attachments (digest TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE users (name TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE roles (name TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT NOT NULL, data BLOB NOT NULL);
            CREATE INDEX sessions_by_user ON sessions (user);
            CREATE TABLE grants (doc_id TEXT NOT NULL, kind INTEGER NOT NULL, principal TEXT NOT NULL,
                target TEXT NOT NULL, sequence INTEGER NOT NULL, PRIMARY KEY (doc_id, kind, principal, target))
                WITHOUT ROWID;
            CREATE INDEX grants_by_principal ON grants (principal, kind);
            INSERT INTO channel_membership VALUES ('list', 'a', 3, 1), ('list', 'b', 3, 0);
            INSERT INTO grants VALUES ('list', 0, 'user1', 'b', 1), ('list', 1, 'user1', 'moderator', 3);
            """)
        let metadata = #"{"history":[["1-a",-1,false,null,["a","b"]],["2-b",0,false,null,["b"]]],"access":{"user1":["b"]},"role_access":{"user1":["moderator"]}}"#
        try connection.execute(
            "INSERT INTO documents VALUES (3, 'list', 0, '2-b', ?, ?)", Array("{}".utf8), Array(metadata.utf8))
        try connection.setUserVersion(2)
    }
}
