import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

/// PostgreSQL transactions are values: a batch's body gets a view of the storage bound to its transaction
/// (``GatewayStorage/inBatch(_:)``), and whatever holds that view runs in the transaction, on any thread. Nothing
/// finds a transaction from the calling thread.
@Suite(.timeLimit(.minutes(2))) struct PostgresStorageTransactionTests {
    private func openStorage() async throws -> any GatewayStorage {
        let url = try await PostgresServer.sharedServer().newDatabase()
        return try await offCooperativeThreads { try StorageLocation(parsing: url).openStorage(databaseName: "db") }
    }

    private static func edited(_ document: StoredDocument?, id: String) -> StoredDocument? {
        var document = document ?? StoredDocument(id: id)
        _ = try? document.tree.addLocalEdit(parent: document.winner?.id, body: ["v": 1], deleted: false)
        return document
    }

    /// Runs `body` on a new thread and waits for it: a call that found its transaction by thread would miss it.
    private static func onAnotherThread(_ body: @escaping @Sendable () throws(GatewayError) -> Void) throws(GatewayError) {
        let failure = Mutex<GatewayError?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            do throws(GatewayError) { try body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }.start()
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    @Test func writesMadeThroughABatchOnAnotherThreadCommitAndRollBackWithIt() async throws {
        let storage = try await openStorage()
        try await offCooperativeThreads {
            defer { storage.close() }
            let bytes = Array("rolled back".utf8)
            // Rolled back: neither the document nor the attachment written from the other thread stays.
            var digest = ""
            let failed = Result { () throws(GatewayError) in
                try storage.inBatch { batch throws(GatewayError) in
                    try batch.update(documentID: "mine") { Self.edited($0, id: "mine") }
                    nonisolated(unsafe) let batch = batch
                    nonisolated(unsafe) var written = ""
                    try Self.onAnotherThread { () throws(GatewayError) in
                        try batch.update(documentID: "theirs") { Self.edited($0, id: "theirs") }
                        written = try batch.putAttachment(bytes)
                    }
                    digest = written
                    throw GatewayError.forbidden("rolled back")
                }
            }
            #expect(throws: GatewayError.self) { try failed.get() }
            #expect(try storage.document(id: "mine") == nil)
            #expect(try storage.document(id: "theirs") == nil)
            #expect(try storage.attachment(digest: digest) == nil)
            // Committed: both documents, at consecutive sequences of the one transaction.
            try storage.inBatch { batch throws(GatewayError) in
                try batch.update(documentID: "mine") { Self.edited($0, id: "mine") }
                nonisolated(unsafe) let batch = batch
                try Self.onAnotherThread { () throws(GatewayError) in
                    #expect(try batch.document(id: "mine") != nil)  // the batch's own write, not yet committed
                    try batch.update(documentID: "theirs") { Self.edited($0, id: "theirs") }
                }
            }
            let mine = try #require(try storage.document(id: "mine"))
            let theirs = try #require(try storage.document(id: "theirs"))
            #expect(theirs.sequence == mine.sequence + 1)
        }
    }

    @Test func aBatchsStorageKeptPastItsEndWritesNothing() async throws {
        let storage = try await openStorage()
        try await offCooperativeThreads {
            defer { storage.close() }
            var kept: (any GatewayStorage)?
            try storage.inBatch { batch throws(GatewayError) in kept = batch }
            let view = try #require(kept)
            #expect {
                try view.update(documentID: "late") { Self.edited($0, id: "late") }
            } throws: { error in
                (error as? GatewayError)?.statusCode == 500
            }
            #expect(throws: GatewayError.self) { try view.putAttachment(Array("late".utf8)) }
            #expect(try storage.document(id: "late") == nil)
            // The storage itself is unaffected, and closing a view closes nothing.
            view.close()
            try storage.update(documentID: "after") { Self.edited($0, id: "after") }
            #expect(try storage.document(id: "after") != nil)
        }
    }

    @Test("pool_max_conns bounds the connections: with one, a call beside an open batch waits for it and gets a 503")
    func theConnectionLimitHolds() async throws {
        let url = try await PostgresServer.sharedServer().newDatabase() + "?pool_max_conns=1&connect_timeout=1"
        let storage = try await offCooperativeThreads { try StorageLocation(parsing: url).openStorage(databaseName: "db") }
        try await offCooperativeThreads {
            defer { storage.close() }
            try storage.inBatch { batch throws(GatewayError) in
                try batch.update(documentID: "inside") { Self.edited($0, id: "inside") }
                // The storage itself, not the batch: it needs a connection of its own, and the one is taken.
                do throws(GatewayError) {
                    _ = try storage.document(id: "inside")
                    Issue.record("a second connection was opened past pool_max_conns=1")
                } catch {
                    #expect(error.statusCode == 503)
                    #expect(error.reason.contains("every one is busy"))
                }
            }
            #expect(try storage.document(id: "inside") != nil)
        }
    }

    /// Opens a storage at a new database with one connection and `connect_timeout`, and holds its connection in a
    /// batch on a thread of its own until `release` is signalled; `ended` is signalled once the batch ended.
    private static func storageWithItsConnectionHeld(
        timeout: Int, release: DispatchSemaphore, ended: DispatchSemaphore
    ) async throws -> any GatewayStorage {
        let url = try await PostgresServer.sharedServer().newDatabase() + "?pool_max_conns=1&connect_timeout=\(timeout)"
        let storage = try await offCooperativeThreads { try StorageLocation(parsing: url).openStorage(databaseName: "db") }
        let holding = DispatchSemaphore(value: 0)
        Thread {
            try? storage.inBatch { _ throws(GatewayError) in
                holding.signal()
                release.wait()
            }
            ended.signal()
        }.start()
        try await offCooperativeThreads { holding.wait() }
        return storage
    }

    @Test("A task waiting for a connection beyond pool_max_conns gets a 503 after connect_timeout")
    func aTaskWaitingForAConnectionTimesOut() async throws {
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let storage = try await Self.storageWithItsConnectionHeld(timeout: 1, release: release, ended: ended)
        do {
            _ = try await storage.fetchDocuments(ids: ["x"], winnerAsText: false)
            Issue.record("a second connection was opened past pool_max_conns=1")
        } catch {
            #expect(error.statusCode == 503)
            #expect(error.reason.contains("every one is busy"))
        }
        release.signal()
        try await offCooperativeThreads { ended.wait() }
        #expect(try await storage.fetchDocuments(ids: ["x"], winnerAsText: false).isEmpty)
        storage.close()
    }

    @Test("A task cancelled while it waits for a connection (its client gone) leaves the queue at once")
    func aCancelledTaskLeavesTheQueue() async throws {
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let storage = try await Self.storageWithItsConnectionHeld(timeout: 60, release: release, ended: ended)
        let pool = try #require((storage as? PostgresGatewayStorage)?.pool)
        let task = Task { () throws(GatewayError) -> [String: StoredDocument] in
            try await storage.fetchDocuments(ids: ["x"], winnerAsText: false)
        }
        #expect(try await offCooperativeThreads { pool.waitUntilTasksWait(1, within: .seconds(30)) })
        let cancelled = ContinuousClock.now
        task.cancel()
        let outcome = await task.result
        #expect(throws: GatewayError.serviceUnavailable("The request was cancelled while it waited for a PostgreSQL connection")) {
            try outcome.get()
        }
        #expect(ContinuousClock.now - cancelled < .seconds(30), "the cancelled task waited for its timeout")
        #expect(pool.waitingCount == 0)
        release.signal()
        try await offCooperativeThreads { ended.wait() }
        #expect(try await storage.fetchDocuments(ids: ["x"], winnerAsText: false).isEmpty)
        storage.close()
    }

    @Test("Closing the storage ends the waits for a connection at once, a task's and a thread's")
    func closingEndsTheWaits() async throws {
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let storage = try await Self.storageWithItsConnectionHeld(timeout: 60, release: release, ended: ended)
        let task = Task { () throws(GatewayError) -> [String: StoredDocument] in
            try await storage.fetchDocuments(ids: ["x"], winnerAsText: false)
        }
        let thread = Task { try await offCooperativeThreads { try storage.document(id: "x") } }
        let pool = try #require((storage as? PostgresGatewayStorage)?.pool)
        #expect(try await offCooperativeThreads { pool.waitUntilTasksWait(2, within: .seconds(30)) })
        storage.close()
        let closed = GatewayError.serviceUnavailable("The database is closed")
        let taskOutcome = await task.result
        #expect(throws: closed) { try taskOutcome.get() }
        let threadOutcome = await thread.result
        #expect(throws: closed) { try threadOutcome.get() }
        release.signal()
        try await offCooperativeThreads { ended.wait() }
    }
}
