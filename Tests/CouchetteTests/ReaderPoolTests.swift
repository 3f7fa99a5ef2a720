import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// Reads beside the writer: a read never waits for a write in progress and never sees part of one; a read inside
/// a batch sees the batch's own writes; a listener sees what was committed.
@Suite(.timeLimit(.minutes(5))) struct ReaderPoolTests {
    @Test func aReadDoesNotWaitForABatchInProgressNorSeeIt() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            let db = try directory.open()
            defer { try? db.close() }
            let lists = try db.defaultCollection()
            try lists.save(document: MutableDocument(id: "before", data: ["name": "committed"]))

            let written = DispatchSemaphore(value: 0)
            let readDone = DispatchSemaphore(value: 0)
            let batchEnded = DispatchSemaphore(value: 0)
            let outcome = Outcome()
            let writer = Thread {
                try? db.inBatch {
                    try lists.save(document: MutableDocument(id: "during", data: ["name": "uncommitted"]))
                    written.signal()
                    // The batch stays open until the other thread has read (or gives up after 10 s: a read
                    // that waited for the batch would only return then).
                    outcome.readInTime = readDone.wait(timeout: .now() + 10) == .success
                }
                batchEnded.signal()
            }
            writer.start()
            written.wait()
            let before = try lists.document(id: "before")?.string(forKey: "name")
            let during = try lists.document(id: "during")
            readDone.signal()
            batchEnded.wait()

            #expect(outcome.readInTime)
            #expect(before == "committed")
            #expect(during == nil)
            #expect(try lists.document(id: "during")?.string(forKey: "name") == "uncommitted")
        }
    }

    @Test func aReadInsideABatchSeesTheBatchsWrites() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try db.inBatch {
            try lists.save(document: MutableDocument(id: "new", data: ["name": "inside"]))
            #expect(try lists.document(id: "new")?.string(forKey: "name") == "inside")
            #expect(try db.createQuery("SELECT COUNT(*) AS n FROM _").execute().allResults().first?.int(forKey: "n") == 1)
        }
    }

    /// Random transfers between accounts in batches while a reader sums them with one query at a time: every sum
    /// it sees is the invariant total (a snapshot, never half a batch).
    @Test func everyReadSeesAWholeSnapshot() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            let db = try directory.open()
            defer { try? db.close() }
            let accounts = try db.defaultCollection()
            let count = 20
            try db.inBatch {
                for index in 0..<count {
                    try accounts.save(document: MutableDocument(id: "a\(index)", data: ["balance": 100]))
                }
            }
            let total = 100 * count
            let writerDone = DispatchSemaphore(value: 0)
            let writer = Thread {
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<300 {
                    try? db.inBatch {
                        for _ in 0..<Int.random(in: 1...4, using: &generator) {
                            let from = Int.random(in: 0..<count, using: &generator)
                            let to = Int.random(in: 0..<count, using: &generator)
                            let amount = Int.random(in: 1...50, using: &generator)
                            let source = try accounts.document(id: "a\(from)")!.toMutable()
                            try accounts.save(document: source.setInt(source.int(forKey: "balance") - amount, forKey: "balance"))
                            let target = try accounts.document(id: "a\(to)")!.toMutable()
                            try accounts.save(document: target.setInt(target.int(forKey: "balance") + amount, forKey: "balance"))
                        }
                    }
                }
                writerDone.signal()
            }
            writer.start()
            let sum = try db.createQuery("SELECT SUM(balance) AS total, COUNT(*) AS n FROM _")
            var sums = 0
            var wrong: [Int] = []
            while writerDone.wait(timeout: .now()) == .timedOut {
                let row = try #require(try sum.execute().allResults().first)
                if row.int(forKey: "total") != total || row.int(forKey: "n") != count { wrong.append(row.int(forKey: "total")) }
                sums += 1
            }
            #expect(wrong.isEmpty, "sums seen mid-batch: \(wrong.prefix(5))")
            #expect(sums > 0)
            #expect(try sum.execute().allResults().first?.int(forKey: "total") == total)
        }
    }

    /// Reads that read again inside (a view's rows with their documents) on more threads than the pool has
    /// connections: each nested read joins its thread's read instead of waiting for another connection.
    @Test func nestedReadsOnManyThreadsDoNotExhaustThePool() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            let db = try directory.open()
            defer { try? db.close() }
            let tasks = try db.defaultCollection()
            try db.inBatch {
                for index in 0..<50 { try tasks.save(document: MutableDocument(id: "t\(index)", data: ["n": index])) }
            }
            let view = tasks.view(named: "byNumber")
            _ = view.setMapBlock({ doc, emit in emit(doc["n"] ?? 0, nil) }, version: "1")
            try view.updateIndex()
            let finished = DispatchSemaphore(value: 0)
            let failures = Failures()
            for _ in 0..<8 {
                Thread {
                    for _ in 0..<20 {
                        var query = view.createQuery()
                        query.includeDocs = true
                        let rows = (try? query.run()).map { Array($0) } ?? []
                        if rows.count != 50 || rows.contains(where: { $0.document == nil }) { failures.add() }
                    }
                    finished.signal()
                }.start()
            }
            for _ in 0..<8 { #expect(finished.wait(timeout: .now() + 60) == .success) }
            #expect(failures.count == 0)
        }
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = 0
        var count: Int { lock.withLock { stored } }
        func add() { lock.withLock { stored += 1 } }
    }

    @Test func aChangeListenerReadsWhatWasCommitted() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let (seen, continuation) = AsyncStream.makeStream(of: String?.self)
        let token = lists.addChangeListener { change in
            continuation.yield(try? lists.document(id: change.documentIDs[0])?.string(forKey: "name"))
        }
        defer { token.remove() }
        try db.inBatch { try lists.save(document: MutableDocument(id: "l", data: ["name": "Groceries"])) }
        var iterator = seen.makeAsyncIterator()
        #expect(await iterator.next() == .some("Groceries"))
    }

    @Test func anEncryptedDatabaseReadsBesideItsWriterBeforeAndAfterAKeyChange() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open { $0.encryptionKey = .password("first") }
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.save(document: MutableDocument(id: "l", data: ["name": "Groceries"]))
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "Groceries")
        try db.changeEncryptionKey(.password("second"))
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "Groceries")
        try lists.save(document: MutableDocument(id: "m", data: ["name": "Today"]))
        #expect(try lists.document(id: "m")?.string(forKey: "name") == "Today")
    }

    /// What the writer thread found.
    final class Outcome: @unchecked Sendable {
        var readInTime = false
    }
}
