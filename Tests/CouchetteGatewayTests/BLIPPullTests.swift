@testable import CouchetteBLIP
import CouchetteCore
import Foundation
import NIOCore
import Testing

@testable import CouchetteGateway

/// Pulling over BLIP: `subChanges`, the gateway's `changes` and `rev` messages (blip-sync-protocol.md §3.3–§3.7).
@Suite(.timeLimit(.minutes(2))) struct BLIPPullTests {
    /// What a pulling client received: each `changes` body and each `rev`, in arrival order.
    actor Received {
        var changes: [[JSONValue]] = []
        var revisions: [BLIPMessage] = []
        private var waiters: [(predicate: @Sendable (isolated Received) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        func record(_ message: BLIPMessage) {
            if message.profile == "changes" { changes.append((try? JSONValue(parsing: message.body).arrayValue) ?? []) }
            if message.profile == "rev" { revisions.append(message) }
            let ready = waiters.filter { $0.predicate(self) }
            waiters.removeAll { $0.predicate(self) }
            for waiter in ready { waiter.continuation.resume() }
        }

        var caughtUp: Bool { changes.contains { $0.isEmpty } }

        /// Waits until `predicate` holds.
        func wait(until predicate: @escaping @Sendable (isolated Received) -> Bool) async {
            if predicate(self) { return }
            await withCheckedContinuation { waiters.append((predicate, $0)) }
        }

        nonisolated func revision(_ id: String, in list: [BLIPMessage]) -> BLIPMessage? {
            list.last { $0.properties["id"] == id }
        }
    }

    /// A client that wants every revision offered (no known ancestors), as an empty database does.
    static func wantingEverything(_ received: Received) -> BLIPConnection.RequestHandler {
        { request, _ in
            await received.record(request)
            guard request.profile == "changes" else { return request.reply() }
            let count = (try? JSONValue(parsing: request.body).arrayValue?.count) ?? 0
            let wanted = JSONValue.array(Array(repeating: .array([]), count: count))
            return request.reply(properties: ["maxHistory": "20", "blobs": "true"], body: wanted.serialized())
        }
    }

    @Test("A one-shot pull gets the user's documents in sequence order with history and tombstones, then []")
    func oneShotPull() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "list", ["channels": ["a"], "name": "one"])
            let second = try await ChangesTests.put(
                client, port: ports.adminPort, "list", ["channels": ["a"], "name": "two"], rev: first)
            try await ChangesTests.put(client, port: ports.adminPort, "theirs", ["channels": ["b"]])
            let gone = try await ChangesTests.put(client, port: ports.adminPort, "gone", ["channels": ["a"]])
            let tombstone = try await ChangesTests.delete(client, port: ports.adminPort, "gone", rev: gone)

            let received = Received()
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: Self.wantingEverything(received)) {
                connection in
                let reply = try await connection.send(properties: ["Profile": "subChanges", "batch": "200"])
                #expect(reply.type == .response)
                await received.wait { $0.caughtUp }
                let changes = await received.changes
                #expect(changes.count == 2)
                #expect(changes.first?.map { $0[1] } == ["list", "gone"])
                #expect(changes.first?.last?[3] == 1)  // the tombstone's deleted flag
                await received.wait { $0.revisions.count == 2 }
                let revisions = await received.revisions
                let list = try #require(received.revision("list", in: revisions))
                #expect(list.properties["rev"] == second)
                #expect(list.properties["history"] == first)
                #expect(list.properties["sequence"] == "2")
                #expect(try JSONValue(parsing: list.body) == ["channels": ["a"], "name": "two"])
                let deleted = try #require(received.revision("gone", in: revisions))
                #expect(deleted.properties["rev"] == tombstone)
                #expect(deleted.properties["deleted"] == "1")
            }
        }
    }

    /// What a client saw, in the order its handlers ran.
    actor EventLog {
        private(set) var events: [String] = []
        private var waiters: [(event: String, continuation: CheckedContinuation<Void, Never>)] = []

        func append(_ event: String) {
            events.append(event)
            for waiter in waiters where waiter.event == event { waiter.continuation.resume() }
            waiters.removeAll { $0.event == event }
        }

        /// Waits until `event` happened, for at most `limit`: for an event that must *not* come before something
        /// the waiter then does, the bound is how long it is given to come.
        func wait(for event: String, within limit: Duration) async {
            if events.contains(event) { return }
            let timeout = Task {
                try await Task.sleep(for: limit)
                self.timedOut(event)
            }
            await withCheckedContinuation { waiters.append((event, $0)) }
            timeout.cancel()
        }

        private func timedOut(_ event: String) {
            for waiter in waiters where waiter.event == event { waiter.continuation.resume() }
            waiters.removeAll { $0.event == event }
        }
    }

    @Test("Regression: the caught-up `changes []` goes out once the client has answered the last batch, not before")
    func caughtUpAfterTheLastBatchIsAnswered() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await ChangesTests.put(client, port: ports.adminPort, "list", ["channels": ["a"]])
            let log = EventLog()
            let handler: BLIPConnection.RequestHandler = { request, _ in
                let entries = (try? JSONValue(parsing: request.body).arrayValue) ?? []
                switch request.profile {
                case "changes" where !entries.isEmpty:
                    await log.append("batch")
                    // Answers late: a `[]` sent without waiting for the answer arrives meanwhile (a batch of several
                    // frames can be overtaken by it, and LiteCore then ends a one-shot pull without the batch).
                    await log.wait(for: "caught up", within: .milliseconds(500))
                    await log.append("answered")
                    let wanted = JSONValue.array(entries.map { _ in .array([]) })
                    return request.reply(properties: ["maxHistory": "20"], body: wanted.serialized())
                case "changes":
                    await log.append("caught up")
                    return request.reply()
                case "rev":
                    await log.append("rev")
                    return request.reply()
                default:
                    return request.reply()
                }
            }
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: handler) { connection in
                _ = try await connection.send(properties: ["Profile": "subChanges", "batch": "200"])
                await log.wait(for: "rev", within: .seconds(10))
                await log.wait(for: "caught up", within: .seconds(10))
                let events = await log.events
                #expect(events.first == "batch")
                #expect(events.firstIndex(of: "answered").map { $0 < (events.firstIndex(of: "caught up") ?? -1) } == true, "\(events)")
                #expect(events.contains("rev"))
            }
        }
    }

    @Test("A continuous pull from a sequence sends new changes as they are committed")
    func continuousPull() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await ChangesTests.put(client, port: ports.adminPort, "old", ["channels": ["a"]])  // 1
            try await ChangesTests.put(client, port: ports.adminPort, "recent", ["channels": ["a"]])  // 2
            let received = Received()
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: Self.wantingEverything(received)) {
                connection in
                _ = try await connection.send(properties: ["Profile": "subChanges", "since": "1", "continuous": "true"])
                // `changes []` comes right after the last batch, the revisions after the client's reply.
                await received.wait { $0.caughtUp && $0.revisions.count == 1 }
                #expect(await received.revisions.map { $0.properties["id"] } == ["recent"])
                try await ChangesTests.put(client, port: ports.adminPort, "new", ["channels": ["a"]])
                try await ChangesTests.put(client, port: ports.adminPort, "hidden", ["channels": ["b"]])
                try await ChangesTests.put(client, port: ports.adminPort, "newer", ["channels": ["a"]])
                await received.wait { $0.revisions.count == 3 }
                #expect(await received.revisions.map { $0.properties["id"] } == ["recent", "new", "newer"])
            }
        }
    }

    @Test("An idle continuous subscription waits as a notifier registration, no task; the connection's end takes it back")
    func idleSubscription() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { server, client, ports in
            let notifier = try await StreamingGateway.database(server).changeNotifier
            let received = Received()
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: Self.wantingEverything(received)) {
                connection in
                _ = try await connection.send(properties: ["Profile": "subChanges", "continuous": "true"])
                await received.wait { $0.caughtUp }
                #expect(try await Self.waitUntil { notifier.waiterCount == 1 })
                // A change wakes it; it sends the change and waits again.
                try await ChangesTests.put(client, port: ports.adminPort, "new", ["channels": ["a"]])
                await received.wait { $0.revisions.count == 1 }
                #expect(try await Self.waitUntil { notifier.waiterCount == 1 })
            }
            // The client closed the connection: the subscription stopped and its registration is gone.
            #expect(try await Self.waitUntil { notifier.waiterCount == 0 })
        }
    }

    /// Takes every frame and drops it.
    struct DroppingTransport: BLIPTransport {
        func send(_ frame: ByteBuffer) async throws {}
        func close(code: Int, reason: String) async {}
    }

    @Test("A connection's stopped subscriptions are let go: a feed holds the connection, whose handler holds the list")
    func stoppedSubscriptionsAreReleased() async throws {
        let database = try GatewayDatabase(config: DatabaseConfig(name: "todo"), startTime: 0)
        let notifier = database.changeNotifier
        let target = AuthorizedDatabase(database: database, caller: .admin)
        let session = PassiveSyncSession(store: GatewaySyncStore(target: target), subprotocol: BLIPSubprotocol.couchbaseMobile3)
        weak var released: SyncPullFeed?
        do {
            // The handler holds the session, as a connection's handler does.
            let connection = BLIPConnection(transport: DroppingTransport()) { [session] _, _ in
                _ = session
                return nil
            }
            let subscription = SubChangesRequest(continuous: true)
            let source = try GatewayChangeSource(subscription, target: target)
            let feed = SyncPullFeed(source, subscription: subscription, session: session, connection: connection)
            session.subscriptions.add(feed)
            await feed.start()  // caught up at once: `changes []`, then it waits as a registration
            #expect(notifier.waiterCount == 1)
            released = feed
        }
        session.subscriptions.stopAll()
        #expect(notifier.waiterCount == 0)
        #expect(try await Self.waitUntil { released == nil })
    }

    /// Whether `condition` came to hold within 10 s (yielding meanwhile): for state the gateway reaches after a
    /// message it sends, whose arrival at the client does not tell.
    static func waitUntil(_ condition: () -> Bool) async throws -> Bool {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .seconds(10) else { return false }
            await Task.yield()
        }
        return true
    }

    @Test("Version vectors are refused; docIDs narrow the feed; a revision the client knows is not sent")
    func optionsAndKnownRevisions() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await ChangesTests.put(client, port: ports.adminPort, "x", ["channels": ["a"]])
            try await ChangesTests.put(client, port: ports.adminPort, "y", ["channels": ["a"]])
            let received = Received()
            // Wants nothing: answers every changes with [].
            let handler: BLIPConnection.RequestHandler = { request, _ in
                await received.record(request)
                return request.reply(body: Array("[]".utf8))
            }
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: handler) { connection in
                let vectors = try await connection.send(properties: ["Profile": "subChanges", "versioning": "version-vectors"])
                #expect(vectors.error?.code == 400)
                let reply = try await connection.send(
                    properties: ["Profile": "subChanges"], body: Array(#"{"docIDs":["y"]}"#.utf8))
                #expect(reply.type == .response)
                await received.wait { $0.caughtUp }
                #expect(await received.changes.first?.map { $0[1] } == ["y"])
                #expect(await received.revisions.isEmpty)
            }
        }
    }
    @Test("A revision with an attachment waits while the client fetches it; other digests are refused")
    func attachments() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "photo", ["channels": ["a"]])
            let upload = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/photo/image.png?rev=\(first)",
                headers: ["Content-Type": "image/png"], body: Array("not really a png".utf8))
            #expect(upload.status == 201)
            let secretRevision = try await ChangesTests.put(client, port: ports.adminPort, "secret", ["channels": ["b"]])
            let secretUpload = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/secret/key.txt?rev=\(secretRevision)",
                headers: ["Content-Type": "text/plain"], body: Array("bob's key".utf8))
            #expect(secretUpload.status == 201)
            let secretDigest = try #require(
                try await client.send(port: ports.adminPort, path: "/todo/secret").jsonValue()["_attachments"]?["key.txt"]?["digest"]?.stringValue)

            let received = Received()
            let (fetched, fetchedContinuation) = AsyncStream.makeStream(of: [String: String].self)
            let handler: BLIPConnection.RequestHandler = { request, connection in
                await received.record(request)
                if request.profile == "changes" {
                    let count = (try? JSONValue(parsing: request.body).arrayValue?.count) ?? 0
                    return request.reply(body: JSONValue.array(Array(repeating: .array([]), count: count)).serialized())
                }
                guard request.profile == "rev", let body = try? JSONValue(parsing: request.body),
                    let digest = body["_attachments"]?["image.png"]?["digest"]?.stringValue
                else { return request.reply() }
                // As Couchbase Lite does: fetch what it lacks before answering the rev.
                var results: [String: String] = [:]
                for (name, asked) in [("mine", digest), ("theirs", secretDigest)] {
                    let reply = try? await connection.send(
                        properties: ["Profile": "getAttachment", "digest": asked, "docID": "photo"])
                    results[name] = reply?.error.map { "\($0.code)" } ?? String(decoding: reply?.body ?? [], as: UTF8.self)
                }
                fetchedContinuation.yield(results)
                return request.reply()
            }
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: handler) { connection in
                _ = try await connection.send(properties: ["Profile": "subChanges"])
                var iterator = fetched.makeAsyncIterator()
                let results = await iterator.next()
                #expect(results == ["mine": "not really a png", "theirs": "403"])
                // Once the rev is answered, its attachment is no longer served either.
                await received.wait { $0.caughtUp }
                let late = try await connection.send(properties: ["Profile": "getAttachment", "digest": secretDigest])
                #expect(late.error?.code == 403)
            }
        }
    }
}
