import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// Live view and all-documents queries: the current rows, then new rows after commits that change them (local or
/// replicated), nothing for commits that do not, option changes, and the end when the database closes.
@Suite(.timeLimit(.minutes(5))) struct LiveQueryTests {
    static func names(_ rows: QueryEnumerator) -> [String] { rows.map { $0.key as? String ?? "?" } }

    /// Feeds what a live query's stream yields into an inbox (`nil` once the stream ends), from a task.
    static func collect<T: Sendable>(
        _ stream: AsyncThrowingStream<QueryEnumerator, any Error>, _ transform: @escaping @Sendable (QueryEnumerator) -> T
    ) -> (Inbox<T?>, Task<Void, any Error>) {
        let inbox = Inbox<T?>()
        let task = Task {
            for try await rows in stream { inbox.put(transform(rows)) }
            inbox.put(nil)
        }
        return (inbox, task)
    }

    @Test func aLiveViewQueryFollowsLocalChangesAndEndsWhenTheDatabaseCloses() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        try MapReduceViewTests.saveList(db, "l1", name: "Books")
        let live = try MapReduceViewTests.listsByName(db).createQuery().asLive()
        live.updateInterval = 0
        let (inbox, task) = Self.collect(live.changes(), Self.names)
        #expect(await next(inbox.stream) == ["Books"])
        try MapReduceViewTests.saveList(db, "l2", name: "apples")
        #expect(await next(inbox.stream) == ["apples", "Books"])
        // A commit that does not change the rows is not reported: the next report is the one after it.
        try MapReduceViewTests.saveTask(db, "t1", list: "l1", complete: false)
        try MapReduceViewTests.saveList(db, "l3", name: "Cherries")
        #expect(await next(inbox.stream) == ["apples", "Books", "Cherries"])
        // Options forward to the query and re-run it.
        live.descending = true
        #expect(await next(inbox.stream) == ["Cherries", "Books", "apples"])
        #expect(live.rows.map(Self.names) == ["Cherries", "Books", "apples"])
        try db.close()
        #expect(await next(inbox.stream) == .some(nil))
        try await task.value
    }

    @Test func listenersHearTheRowsAndBurstsCoalesce() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let view = try MapReduceViewTests.listsByName(db)
        let live = view.createQuery().asLive()
        let inbox = Inbox<Int>()
        let token = live.addChangeListener(withQueue: DispatchQueue(label: "test")) { rows in inbox.put(rows.count) }
        defer { token.remove() }
        live.start()
        #expect(await next(inbox.stream) == 0)
        // Twenty commits in a row: the rows are reported after the burst, far fewer than twenty times.
        for index in 0..<20 { try MapReduceViewTests.saveList(db, "l\(index)", name: "List \(index)") }
        var reports = 0
        while let count = await next(inbox.stream) {
            reports += 1
            if count == 20 { break }
        }
        #expect(reports < 20)
        let rows = try await live.waitForRows()
        #expect(rows.count == 20)
        live.stop()
    }

    @Test func aLiveConflictQuerySeesAConflictArrivingByReplication() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["name": "shared"], documentID: "c")
            func push() async throws {
                var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
                config.addCollection(try phone.defaultCollection())
                config.replicatorType = .push
                try await Replicator(config: config).run()
            }
            try await push()
            // Concurrent edits on both sides.
            let base = try #require(try phone.defaultCollection().document(id: "c")?.revisionID)
            _ = try phone.defaultCollection().putProperties(["name": "phone", "_rev": base], documentID: "c")
            _ = try tablet.defaultCollection().putProperties(["name": "tablet", "_rev": base], documentID: "c")

            var query = try tablet.createAllDocumentsQuery()
            query.allDocsMode = .onlyConflicts
            let live = query.asLive()
            live.updateInterval = 0
            let (inbox, task) = Self.collect(live.changes()) { rows in rows.map { $0.documentID ?? "?" } }
            defer { task.cancel() }
            #expect(await next(inbox.stream) == [])
            try await push()
            #expect(await next(inbox.stream) == ["c"])
            #expect(live.rows?.row(at: 0).conflictingRevisions?.count == 2)
        }
    }
}
