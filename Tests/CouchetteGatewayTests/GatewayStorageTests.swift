import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

@Suite(.timeLimit(.minutes(5))) struct GatewayStorageTests {
    private func rev(_ text: String) -> RevisionID { try! RevisionID(parsing: text) }

    /// A document with one more revision on top of `document`, in `channels`.
    private func edited(
        _ document: StoredDocument?, id: String, body: JSONValue, deleted: Bool = false, channels: Set<String> = []
    ) throws -> StoredDocument {
        var document = document ?? StoredDocument(id: id)
        let revision = try document.tree.addLocalEdit(parent: document.winner?.id, body: body, deleted: deleted)
        document.channels[revision] = channels
        return document
    }

    private func temporaryPath() -> String {
        (NSTemporaryDirectory() as NSString).appendingPathComponent("gateway-\(UUID().uuidString)")
    }

    @Test(arguments: StorageBackend.allCases)
    func storesDocumentsWithSequencesAndReadsThemBack(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            #expect(try storage.lastSequence == 0)
            let first = try storage.update(documentID: "a") { try? edited($0, id: "a", body: ["v": 1], channels: ["x"]) }
            #expect(first?.sequence == 1)
            try storage.update(documentID: "b") { try? edited($0, id: "b", body: ["v": 2]) }
            let second = try storage.update(documentID: "a") { try? edited($0, id: "a", body: ["v": 3], channels: ["y"]) }
            #expect(second?.sequence == 3)
            let read = try #require(try storage.document(id: "a"))
            #expect(read.sequence == 3)
            #expect(read.winner?.body == ["v": 3])
            #expect(read.tree.count == 2)
            #expect(read.currentChannels == ["y"])
            #expect(read.channels.count == 2)
            #expect(try storage.document(id: "missing") == nil)
            #expect(try storage.changes(since: 0, limit: nil).map(\.documentID) == ["b", "a"])
            #expect(try storage.changes(since: 2, limit: nil).map(\.sequence) == [3])
            #expect(try storage.changes(since: 0, limit: 1).map(\.documentID) == ["b"])
            #expect(try storage.documentIDs(from: nil, to: nil, limit: nil) == ["a", "b"])
            #expect(try storage.documentIDs(from: "b", to: nil, limit: nil) == ["b"])
        }
    }

    @Test("Leaf revisions come without bodies, the winner first, live leaves before tombstones; absent IDs are left out",
        arguments: StorageBackend.allCases)
    func leafRevisionsInWinningOrder(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            try storage.update(documentID: "plain") { try? edited($0, id: "plain", body: ["v": 1]) }
            let stored = try storage.update(documentID: "torn") { current throws(GatewayError) in
                var document = try? edited(current, id: "torn", body: ["v": 1])
                guard let root = document?.winner?.id else { return nil }
                // Three branches from the root, as pushed by other peers: two live, one deleted.
                for (digest, deleted) in [("aaaa", false), ("bbbb", false), ("ffff", true)] {
                    let branch = try! RevisionID(parsing: "2-\(digest)")
                    _ = try? document?.tree.insert(
                        branch, body: deleted ? nil : ["branch": .string(digest)], deleted: deleted, history: [branch, root])
                }
                return document
            }
            let expected = try #require(stored).tree.leaves.map(\.id)
            #expect(expected.count == 3)
            let leaves = try storage.leafRevisions(ids: ["torn", "plain", "missing", "torn"])
            #expect(leaves["torn"] == expected)
            #expect(leaves["torn"]?.first == stored?.winner?.id)
            #expect(leaves["plain"] == [try #require(try storage.document(id: "plain")?.winner?.id)])
            #expect(leaves["missing"] == nil)
            #expect(leaves.count == 2)
            // The same as the whole document says.
            #expect(try storage.document(id: "torn")?.tree.leaves.map(\.id) == expected)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aTransformReturningNilOrThrowingChangesNothing(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            #expect(try storage.update(documentID: "a") { _ in nil } == nil)
            #expect(throws: GatewayError.self) {
                try storage.update(documentID: "a") { _ throws(GatewayError) in throw .forbidden("no") }
            }
            #expect(try storage.document(id: "a") == nil)
            #expect(try storage.changes(since: 0, limit: nil).isEmpty)
            // PostgreSQL takes a write's sequence with its locking read (one round trip fewer): a write that changes
            // nothing may leave a gap there, never an entry.
            if backend != .postgres { #expect(try storage.lastSequence == 0) }
            try storage.update(documentID: "a") { try? edited($0, id: "a", body: [:]) }
            let entries = try storage.changes(since: 0, limit: nil)
            #expect(entries.map(\.documentID) == ["a"])
            #expect(try storage.lastSequence == entries.last?.sequence)
        }
    }

    @Test(
        "Compaction works through the documents a slice at a time and reaches every one, keeping sequences",
        arguments: StorageBackend.allCases)
    func compactionReachesEverySlice(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            let count = SQLiteGatewayStorage.compactionSlice * 2 + 300
            let ids = (0..<count).map { "doc\($0)" }
            for edit in 0..<2 {
                for chunk in stride(from: 0, to: count, by: 500).map({ Array(ids[$0..<min($0 + 500, count)]) }) {
                    try storage.inBatch(updating: chunk) { storage throws(GatewayError) in
                        for id in chunk {
                            try storage.update(documentID: id) { try? edited($0, id: id, body: ["edit": .int(Int64(edit))]) }
                        }
                    }
                }
            }
            let before = try storage.changes(since: 0, limit: nil).map(\.sequence)
            #expect(try storage.compact() == count)
            #expect(try storage.changes(since: 0, limit: nil).map(\.sequence) == before)
            let last = try #require(try storage.document(id: ids[count - 1]))
            let parent = try #require(last.tree.nodes.first { $0.id.generation == 1 })
            #expect(parent.body == nil)
            #expect(last.winner?.body == ["edit": 1])
            #expect(try storage.compact() == 0)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func channelFeedsShowDocumentsInTheChannelsAndRemovals(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            try storage.update(documentID: "list") { try? edited($0, id: "list", body: [:], channels: ["user1", "moderators"]) }
            try storage.update(documentID: "other") { try? edited($0, id: "other", body: [:], channels: ["user2"]) }
            var user1 = try storage.changes(inChannels: ["user1"], since: 0, limit: nil)
            #expect(user1.map(\.documentID) == ["list"])
            #expect(user1.first?.removedFrom.isEmpty == true)
            // The list leaves user1's channel but stays in moderators.
            try storage.update(documentID: "list") { try? edited($0, id: "list", body: ["v": 2], channels: ["moderators"]) }
            user1 = try storage.changes(inChannels: ["user1"], since: 0, limit: nil)
            #expect(user1.map(\.documentID) == ["list"])
            #expect(user1.first?.removedFrom == ["user1"])
            #expect(user1.first?.sequence == 3)
            let moderators = try storage.changes(inChannels: ["moderators", "user1"], since: 0, limit: nil)
            #expect(moderators.first?.removedFrom.isEmpty == true)
            #expect(try storage.changes(inChannels: ["user1"], since: 3, limit: nil).isEmpty)
            #expect(try storage.changes(inChannels: ["user2", "user1"], since: 0, limit: nil).map(\.documentID) == ["other", "list"])
            #expect(try storage.changes(inChannels: [], since: 0, limit: nil).isEmpty)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func concurrentUpdatesOfOneDocumentAreSerialized(backend: StorageBackend) async throws {
        let location = try await backend.newLocation()
        let storage = try location.openStorage(databaseName: "todo")
        defer {
            storage.close()
            StorageBackend.removeFiles(of: location)
        }
        try storage.update(documentID: "counter") { try? edited($0, id: "counter", body: ["n": 0]) }
        // Eight writers, each on a thread of its own (PostgreSQL calls wait, and must not hold cooperative threads).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await offCooperativeThreads {
                        for _ in 0..<25 {
                            _ = try? storage.update(documentID: "counter") { current in
                                let n = current?.winner?.body?["n"]?.intValue ?? 0
                                return try? self.edited(current, id: "counter", body: ["n": .int(n + 1)])
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try #require(try storage.document(id: "counter"))
        #expect(final.winner?.body == ["n": 200])
        #expect(try storage.lastSequence == 201)
    }

    @Test(arguments: StorageBackend.allCases)
    func expiredDocumentsAreFoundAndPurgedOnlyWhileExpired(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            for (id, offset) in [("soon", 10.0), ("later", 100.0), ("never", nil)] as [(String, Double?)] {
                try storage.update(documentID: id) { current in
                    var document = try? edited(current, id: id, body: [:])
                    document?.expiry = offset.map { now.addingTimeInterval($0) }
                    return document
                }
            }
            #expect(try storage.expiredDocumentIDs(at: now, limit: 10).isEmpty)
            #expect(try storage.expiredDocumentIDs(at: now.addingTimeInterval(50), limit: 10) == ["soon"])
            #expect(try storage.expiredDocumentIDs(at: now.addingTimeInterval(500), limit: 10) == ["soon", "later"])
            #expect(try storage.expiredDocumentIDs(at: now.addingTimeInterval(500), limit: 1) == ["soon"])
            // Given a later expiry since it was found, a document stays; an expired one goes; one without stays.
            try storage.update(documentID: "soon") { current in
                var document = try? edited(current, id: "soon", body: ["v": 2])
                document?.expiry = now.addingTimeInterval(1_000)
                return document
            }
            #expect(try !storage.purge(documentID: "soon", expiredBy: now.addingTimeInterval(50)))
            #expect(try storage.purge(documentID: "later", expiredBy: now.addingTimeInterval(500)))
            #expect(try !storage.purge(documentID: "never", expiredBy: now.addingTimeInterval(500)))
            #expect(try storage.document(id: "soon") != nil && storage.document(id: "later") == nil)
            #expect(try storage.expiredDocumentIDs(at: now.addingTimeInterval(5_000), limit: 10) == ["soon"])
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func localDocumentsHaveTheirOwnRevisions(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            #expect(try storage.putLocalDocument(id: "cp", body: ["seq": 1], expectedRevision: nil) == "0-1")
            #expect(throws: GatewayError.self) { try storage.putLocalDocument(id: "cp", body: [:], expectedRevision: nil) }
            #expect(try storage.putLocalDocument(id: "cp", body: ["seq": 2], expectedRevision: "0-1") == "0-2")
            #expect(try storage.localDocument(id: "cp")?.body == ["seq": 2])
            #expect(throws: GatewayError.self) { try storage.deleteLocalDocument(id: "cp", expectedRevision: "0-1") }
            try storage.deleteLocalDocument(id: "cp", expectedRevision: "0-2")
            #expect(try storage.localDocument(id: "cp") == nil)
            #expect(try storage.changes(since: 0, limit: nil).isEmpty)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func attachmentsAreStoredOncePerDigest(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            let digest = try storage.putAttachment(Array("hello".utf8))
            #expect(digest == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
            #expect(try storage.putAttachment(Array("hello".utf8)) == digest)
            #expect(try storage.attachment(digest: digest) == Array("hello".utf8))
            #expect(try storage.attachment(digest: "sha1-nope") == nil)
        }
    }

    @Test(arguments: ["directory", "file"])
    func filesPersistAcrossReopeningAndSequencesAreNotReusedAfterPurge(kind: String) throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let location: StorageLocation = kind == "directory" ? .directory(path) : .file(path)
        var storage = try SQLiteGatewayStorage(location: location, databaseName: "todo")
        try storage.update(documentID: "a") { try? edited($0, id: "a", body: ["v": 1], channels: ["c"]) }
        try storage.update(documentID: "b") { try? edited($0, id: "b", body: ["v": 2]) }
        #expect(try storage.purge(documentID: "b"))
        #expect(try !storage.purge(documentID: "b"))
        storage.close()
        #expect(throws: GatewayError.self) { try storage.document(id: "a") }
        storage = try SQLiteGatewayStorage(location: location, databaseName: "todo")
        defer { storage.close() }
        #expect(try storage.document(id: "a")?.winner?.body == ["v": 1])
        #expect(try storage.document(id: "a")?.currentChannels == ["c"])
        #expect(try storage.lastSequence == 2)
        let next = try storage.update(documentID: "c") { try? edited($0, id: "c", body: [:]) }
        #expect(next?.sequence == 3)
    }

    @Test func memoryStorageIsGoneAfterClosing() throws {
        var storage = try SQLiteGatewayStorage(location: .memory, databaseName: "todo")
        try storage.update(documentID: "a") { try? edited($0, id: "a", body: [:]) }
        storage.close()
        storage = try SQLiteGatewayStorage(location: .memory, databaseName: "todo")
        defer { storage.close() }
        #expect(try storage.document(id: "a") == nil)
    }

    @Test(arguments: StorageBackend.allCases)
    func metadataRoundTripsAccessGrantsAndExpiry(backend: StorageBackend) async throws {
        try await backend.withStorage(databaseName: "todo") { storage in
            let expiry = Date(timeIntervalSince1970: 1_800_000_000)
            try storage.update(documentID: "list") { current in
                var document = try? edited(current, id: "list", body: ["owner": "user1"], channels: ["task-list.list"])
                document?.access = ["user1": ["task-list.list", "task-list.list.users"]]
                document?.roleAccess = ["user1": ["moderator"]]
                document?.expiry = expiry
                return document
            }
            let read = try #require(try storage.document(id: "list"))
            #expect(read.access == ["user1": ["task-list.list", "task-list.list.users"]])
            #expect(read.roleAccess == ["user1": ["moderator"]])
            #expect(read.expiry == expiry)
        }
    }
}
