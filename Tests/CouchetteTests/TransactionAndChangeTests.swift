import Couchette
import CouchetteTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct TransactionAndChangeTests {
    @Test func inBatchIsAllOrNothingAndListenersFireOnceAfterCommit() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.createCollection(name: "tasks", scope: "todo")
        let inbox = Inbox<CollectionChange>()
        let token = tasks.addChangeListener { inbox.put($0) }
        defer { token.remove() }

        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.inBatch {
                try tasks.save(document: MutableDocument(id: "a"))
                try tasks.save(document: MutableDocument(id: "b"))
                throw Boom()
            }
        }
        #expect(tasks.count == 0)
        #expect(tasks.lastSequence == 0)

        try db.inBatch {
            for name in ["Milk", "Eggs", "Bread"] {
                try tasks.save(document: MutableDocument(id: name, data: ["type": "task", "task": name]))
            }
            // Nested batches join the outer transaction.
            try db.inBatch { try tasks.save(document: MutableDocument(id: "Butter")) }
        }
        let change = try #require(await next(inbox.stream))
        #expect(change.documentIDs == ["Milk", "Eggs", "Bread", "Butter"])
        #expect(change.changes.map(\.sequence) == [1, 2, 3, 4])
        #expect(!change.isExternal)
        #expect(tasks.count == 4)

        let committed = try db.inTransaction {
            try tasks.save(document: MutableDocument(id: "Jam"))
            return false
        }
        #expect(!committed)
        #expect(try tasks.document(id: "Jam") == nil)
        try tasks.save(document: MutableDocument(id: "Tea"))
        // The next delivery is Tea's: nothing was delivered for the rolled-back Jam.
        #expect(await next(inbox.stream)?.documentIDs == ["Tea"])
    }

    @Test func listenersAreRemovedByTheirTokens() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let removed = Inbox<CollectionChange>()
        let kept = Inbox<CollectionChange>()
        let token = lists.addChangeListener { removed.put($0) }
        let other = lists.addChangeListener { kept.put($0) }
        defer { other.remove() }
        token.remove()
        token.remove()
        try lists.save(document: MutableDocument(id: "x"))
        #expect(await next(kept.stream)?.documentIDs == ["x"])
        try lists.save(document: MutableDocument(id: "y"))
        #expect(await next(kept.stream)?.documentIDs == ["y"])
        // The removed listener's stream got nothing: its first element would be "x".
        let nothing = await next(removed.stream, timeout: .milliseconds(50))
        #expect(nothing == nil)
    }

    @Test func asyncSequencesOfChangesEndWhenTheDatabaseCloses() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        let lists = try db.defaultCollection()
        let stream = lists.changes()
        let documentStream = lists.documentChanges(id: "a")
        let reader = Task {
            var ids: [String] = []
            for await change in stream { ids += change.documentIDs }
            return ids
        }
        let documentReader = Task {
            var deletions: [Bool] = []
            for await change in documentStream { deletions.append(change.isDeletion) }
            return deletions
        }
        let a = MutableDocument(id: "a")
        try lists.save(document: a)
        try lists.save(document: MutableDocument(id: "b"))
        try lists.delete(document: a)
        // Wait until the collection stream has seen all three commits before closing.
        let probe = Inbox<CollectionChange>()
        let token = lists.addChangeListener { probe.put($0) }
        try lists.save(document: MutableDocument(id: "c"))
        _ = await next(probe.stream)
        token.remove()
        try db.close()
        let ids = await reader.value
        #expect(ids == ["a", "b", "a", "c"])
        #expect(await documentReader.value == [false, true])
    }

    @Test func localDocumentsAreNotReplicatedDocuments() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let first = try db.putLocalDocument(["lastSequence": "42"], withID: "checkpoint")
        #expect(first == "0-1")
        let stored = try #require(try db.localDocument(withID: "checkpoint"))
        #expect(stored["lastSequence"] as? String == "42")
        #expect(stored["_rev"] as? String == "0-1")
        #expect(try db.putLocalDocument(["lastSequence": "43", "_rev": "0-1"], withID: "checkpoint") == "0-2")
        #expect(throws: CouchetteError.self) {
            try db.putLocalDocument(["lastSequence": "44", "_rev": "0-1"], withID: "checkpoint")
        }
        #expect(try db.defaultCollection().count == 0)
        #expect(try db.defaultCollection().changes(since: 0).isEmpty)
        try db.deleteLocalDocument(withID: "checkpoint")
        #expect(try db.localDocument(withID: "checkpoint") == nil)
        #expect(throws: CouchetteError.self) { try db.deleteLocalDocument(withID: "checkpoint") }
    }
}
