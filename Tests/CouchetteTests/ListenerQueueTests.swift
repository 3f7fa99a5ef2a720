import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// Listeners added without a queue run on a private serial queue, never the main queue (which a server or a
/// command-line program may never drain), and replicator listeners hear which replicator spoke.
@Suite(.timeLimit(.minutes(2))) struct ListenerQueueTests {
    @Test func queryListenersWithoutAQueueRunOffTheMainThread() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let query = try db.createQuery("SELECT COUNT(*) AS n FROM _")
        let calls = Inbox<(count: Int, onMain: Bool)>()
        let token = query.addChangeListener { change in
            calls.put((change.results?.allResults().first?.int(forKey: "n") ?? -1, Thread.isMainThread))
        }
        defer { token.remove() }
        let first = await next(calls.stream)
        #expect(first?.count == 0 && first?.onMain == false)

        let live = try db.createAllDocumentsQuery().asLive()
        let rows = Inbox<Bool>()
        let liveToken = live.addChangeListener { _ in rows.put(Thread.isMainThread) }
        defer { liveToken.remove() }
        live.start()
        #expect(await next(rows.stream) == false)
    }

    @Test func replicatorListenersWithoutAQueueHearTheirReplicatorOffTheMainThread() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["v": 1], documentID: "doc")
            var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
            config.addCollection(try phone.defaultCollection())
            config.replicatorType = .push
            let replicator = Replicator(config: config)
            let statuses = Inbox<(Bool, Bool)>()
            let documents = Inbox<(Bool, Bool, [String])>()
            let statusToken = replicator.addChangeListener { change in
                statuses.put((change.replicator === replicator, Thread.isMainThread))
            }
            let documentToken = replicator.addDocumentReplicationListener { replication in
                documents.put((replication.replicator === replicator, Thread.isMainThread, replication.documents.map(\.id)))
            }
            defer {
                statusToken.remove()
                documentToken.remove()
            }
            let changes = replicator.changes()  // subscribed before the run starts
            let streamed = Task { try await first(of: changes, within: .seconds(60)) { $0.status.activity == .stopped } }
            try await replicator.run()
            let status = await next(statuses.stream)
            #expect(status?.0 == true && status?.1 == false)
            let batch = await next(documents.stream)
            #expect(batch?.0 == true && batch?.1 == false && batch?.2 == ["doc"])
            #expect(try await streamed.value?.replicator === replicator)
        }
    }
}
