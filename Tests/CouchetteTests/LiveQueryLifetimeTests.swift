import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// Streams of live queries keep their query running while they are iterated, even when the caller keeps no
/// reference to it (lite-api.md §12's `try db.createQuery(…).changes()`), and let it go when the consumer stops or is
/// cancelled; every listener of one query reads its results in full.
@Suite(.timeLimit(.minutes(2))) struct LiveQueryLifetimeTests {
    /// A weak reference that tasks can share.
    final class Weak<Object: AnyObject>: @unchecked Sendable {
        weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    enum Ending: String, CaseIterable { case cancelled, stopped }

    /// Counts documents through a SQL++ stream whose query nobody else holds, then ends the stream.
    @Test(arguments: Ending.allCases)
    func aSQLQueryStreamKeepsItsQueryUntilTheConsumerEnds(ending: Ending) async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let counts = Inbox<Int>()
        let (consumer, weakQuery) = try Self.count(in: db, into: counts, stoppingAt: ending == .stopped ? 2 : nil)
        #expect(await next(counts.stream) == 0)
        try db.defaultCollection().save(document: MutableDocument(id: "a"))
        #expect(await next(counts.stream) == 1)
        #expect(weakQuery.object != nil, "the stream holds the query while it is iterated")
        try db.defaultCollection().save(document: MutableDocument(id: "b"))
        #expect(await next(counts.stream) == 2)
        if ending == .cancelled { consumer.cancel() }
        _ = try? await consumer.value
        #expect(weakQuery.object == nil, "the query is let go once the consumer \(ending.rawValue)")
    }

    /// Iterates `SELECT COUNT(*)` in a task, the stream held by nothing else; stops after `last` when given.
    static func count(in db: Database, into counts: Inbox<Int>, stoppingAt last: Int?) throws
        -> (Task<Void, any Error>, Weak<Query>)
    {
        let query = try db.createQuery("SELECT COUNT(*) AS n FROM _")
        let stream = query.changes()
        let consumer = Task {
            for try await results in stream {
                let count = results.allResults().first?.int(forKey: "n") ?? -1
                counts.put(count)
                if count == last { break }
            }
        }
        return (consumer, Weak(query))
    }

    /// The same for a map/reduce view query's stream (`ViewQuery.changes()`), whose live query nobody holds.
    @Test func aViewQueryStreamKeepsItsLiveQueryUntilCancelled() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let view = try MapReduceViewTests.listsByName(db)
        let names = Inbox<[String]>()
        let consumer = Task {
            for try await rows in view.createQuery().changes() { names.put(rows.map { $0.key as? String ?? "?" }) }
        }
        #expect(await next(names.stream) == [])
        try MapReduceViewTests.saveList(db, "l1", name: "Books")
        #expect(await next(names.stream) == ["Books"])
        try MapReduceViewTests.saveList(db, "l2", name: "apples")
        #expect(await next(names.stream) == ["apples", "Books"])
        consumer.cancel()
        _ = try? await consumer.value
    }

    /// Two listeners on one query, and one added after the first results: each reads every row.
    @Test func everyListenerReadsTheResultsInFull() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        for id in ["a", "b", "c"] { try db.defaultCollection().save(document: MutableDocument(id: id)) }
        let query = try db.createQuery("SELECT META().id AS id FROM _ ORDER BY META().id")
        let first = Inbox<[String]>()
        let second = Inbox<[String]>()
        let queue = DispatchQueue(label: "listeners")  // one queue: the two listeners run one after the other
        let tokens = [first, second].map { inbox in
            query.addChangeListener(withQueue: queue) { change in
                inbox.put(change.results?.allResults().compactMap { $0.string(forKey: "id") } ?? [])
            }
        }
        #expect(await next(first.stream) == ["a", "b", "c"])
        #expect(await next(second.stream) == ["a", "b", "c"])
        let late = Inbox<[String]>()
        let lateToken = query.addChangeListener(withQueue: queue) { change in
            late.put(change.results?.allResults().compactMap { $0.string(forKey: "id") } ?? [])
        }
        #expect(await next(late.stream) == ["a", "b", "c"], "a listener added later is replayed unread results")
        for token in tokens + [lateToken] { token.remove() }
    }

    /// The same for a view's live query: each listener's enumerator has a cursor of its own.
    @Test func everyLiveViewListenerHasItsOwnCursor() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        try MapReduceViewTests.saveList(db, "l1", name: "Books")
        try MapReduceViewTests.saveList(db, "l2", name: "apples")
        let live = try MapReduceViewTests.listsByName(db).createQuery().asLive()
        let queue = DispatchQueue(label: "listeners")
        let inboxes = [Inbox<Int>(), Inbox<Int>()]
        let tokens = inboxes.map { inbox in
            live.addChangeListener(withQueue: queue) { rows in
                var read = 0
                while rows.nextRow() != nil { read += 1 }
                inbox.put(read)
            }
        }
        live.start()
        for inbox in inboxes { #expect(await next(inbox.stream) == 2) }
        for token in tokens { token.remove() }
    }
}
