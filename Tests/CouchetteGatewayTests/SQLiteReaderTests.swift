import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

/// An SQLite file's reads beside its writer: a read never waits for a write in progress and never sees part of one;
/// a read inside the writer's own transaction sees what it wrote.
@Suite(.timeLimit(.minutes(5))) struct SQLiteReaderTests {
    /// A file storage in a fresh directory (removed by `close`).
    private func openFile() throws -> (storage: SQLiteGatewayStorage, close: () -> Void) {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("gateway-readers-\(UUID().uuidString)")
        let storage = try SQLiteGatewayStorage(location: .directory(directory), databaseName: "db")
        return (storage, {
            storage.close()
            try? FileManager.default.removeItem(atPath: directory)
        })
    }

    /// Stores `body` as the next revision of `id` (in channel `all`).
    @discardableResult
    private func put(_ storage: any GatewayStorage, _ id: String, _ body: JSONValue) throws(GatewayError)
        -> StoredDocument?
    {
        try storage.update(documentID: id) { current in
            var document = current ?? StoredDocument(id: id)
            guard let revision = try? document.tree.addLocalEdit(parent: document.winner?.id, body: body, deleted: false)
            else { return nil }
            document.channels[revision] = ["all"]
            return document
        }
    }

    @Test func readsDoNotWaitForABatchInProgressNorSeeIt() async throws {
        try await offCooperativeThreads {
            let (storage, close) = try openFile()
            defer { close() }
            try put(storage, "before", ["v": 1])

            let written = DispatchSemaphore(value: 0)
            let readDone = DispatchSemaphore(value: 0)
            let batchEnded = DispatchSemaphore(value: 0)
            let readInTime = Mutex(false)
            let writer = Thread { [self] in
                try? storage.inBatch { storage throws(GatewayError) in
                    _ = try? put(storage, "during", ["v": 2])
                    written.signal()
                    // The batch stays open until the other thread has read (or gives up after 10 s: a read that
                    // waited for the batch would only return then).
                    readInTime.withLock { $0 = readDone.wait(timeout: .now() + 10) == .success }
                }
                batchEnded.signal()
            }
            writer.start()
            written.wait()
            let before = try storage.document(id: "before")
            let during = try storage.document(id: "during")
            let feed = try storage.changes(since: 0, limit: nil)
            let channelFeed = try storage.changes(inChannels: ["all"], since: 0, limit: nil)
            let ids = try storage.documentIDs(from: nil, to: nil, limit: nil)
            let leaves = try storage.leafRevisions(ids: ["before", "during"])
            readDone.signal()
            batchEnded.wait()

            #expect(readInTime.withLock { $0 })
            #expect(before?.winner?.body == ["v": 1])
            #expect(during == nil)
            #expect(feed.map(\.documentID) == ["before"])
            #expect(channelFeed.map(\.documentID) == ["before"])
            #expect(ids == ["before"])
            #expect(Set(leaves.keys) == ["before"])
            // Once committed, every read sees it.
            #expect(try storage.document(id: "during")?.winner?.body == ["v": 2])
            #expect(try storage.changes(inChannels: ["all"], since: 0, limit: nil).map(\.documentID) == ["before", "during"])
        }
    }

    @Test func readsInsideTheWritersTransactionSeeItsWrites() async throws {
        try await offCooperativeThreads {
            let (storage, close) = try openFile()
            defer { close() }
            try storage.inBatch { storage throws(GatewayError) in
                try put(storage, "new", ["v": 1])
                #expect(try storage.document(id: "new")?.winner?.body == ["v": 1])
                #expect(try storage.changes(inChannels: ["all"], since: 0, limit: nil).map(\.documentID) == ["new"])
            }
            // A transform that stores an attachment reads it back before its transaction commits.
            var readBack: [UInt8]?
            try storage.update(documentID: "with-attachment") { current, transaction throws(GatewayError) in
                let digest = try transaction.putAttachment(Array("hello".utf8))
                readBack = try transaction.attachment(digest: digest)
                var document = current ?? StoredDocument(id: "with-attachment")
                _ = try? document.tree.addLocalEdit(parent: nil, body: ["a": .string(digest)], deleted: false)
                return document
            }
            #expect(readBack == Array("hello".utf8))
        }
    }

    /// Random transfers between accounts in batches while readers sum every account with one read at a time: each
    /// sum is the invariant total (a snapshot, never half a batch).
    @Test func everyReadSeesAWholeSnapshot() async throws {
        try await offCooperativeThreads {
            let (storage, close) = try openFile()
            defer { close() }
            let accounts = (0..<8).map { "account-\($0)" }
            try storage.inBatch { storage throws(GatewayError) in
                for id in accounts { _ = try? put(storage, id, ["balance": 100]) }
            }
            let writing = Mutex(true)
            let sums = Mutex<[Int]>([])
            let readersDone = DispatchGroup()
            let readers = (0..<3).map { _ in
                Thread {
                    defer { readersDone.leave() }
                    while writing.withLock({ $0 }) {
                        guard let documents = try? storage.documents(ids: accounts, winnerAsText: false) else { continue }
                        let sum = documents.values.reduce(0) { total, document in
                            total + Int(document.winner?.body?["balance"]?.intValue ?? -1_000)
                        }
                        sums.withLock { $0.append(sum) }
                    }
                }
            }
            var random = SplitMix64(state: 7)
            for reader in readers {
                readersDone.enter()
                reader.start()
            }
            for _ in 0..<200 {
                let from = accounts[Int(random.next() % 8)]
                let to = accounts[Int(random.next() % 8)]
                let amount = Int64(random.next() % 10)
                try storage.inBatch { storage throws(GatewayError) in
                    for (id, change) in [(from, -amount), (to, amount)] {
                        guard let balance = try storage.document(id: id)?.winner?.body?["balance"]?.intValue else { continue }
                        _ = try? put(storage, id, ["balance": .int(balance + change)])
                    }
                }
            }
            writing.withLock { $0 = false }
            readersDone.wait()
            let seen = sums.withLock { $0 }
            #expect(!seen.isEmpty)
            #expect(seen.allSatisfy { $0 == 800 })
        }
    }
}
