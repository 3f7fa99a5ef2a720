import CouchetteCore
import CouchetteSQLite
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// `GET /{db}/`'s document counts and body bytes (``DocumentTotals``): kept by the SQLite storage's writes, exact
/// whatever the writes do, and counted afresh only after a write that does not keep them.
@Suite(.timeLimit(.minutes(2))) struct DocumentTotalsTests {
    /// A SQLite storage in a new file whose channel `boom` fails (``FailingChannelStorage``), and a second
    /// connection reading the same file.
    private func withStorage(_ body: (SQLiteGatewayStorage, Connection) throws -> Void) throws {
        try FailingChannelStorage.run(body)
    }

    /// The counts as a scan of the file reads them now.
    private func scanned(_ reader: Connection) throws -> StorageStatistics {
        let row = try #require(
            try reader.firstRow(
                """
                SELECT count(*) - coalesce(sum(deleted != 0), 0), coalesce(sum(deleted != 0), 0),
                    coalesce(sum(length(body)), 0) FROM documents
                """))
        return StorageStatistics(
            documentCount: Int(row[0].int64Value ?? -1), deletedDocumentCount: Int(row[1].int64Value ?? -1),
            externalSize: Int(row[2].int64Value ?? -1))
    }

    private func counts(_ statistics: StorageStatistics) -> [Int] {
        [statistics.documentCount, statistics.deletedDocumentCount, statistics.externalSize]
    }

    /// A new revision of `id` with `body`, deleted or not, in `channels`.
    @discardableResult
    private func write(
        _ storage: any GatewayStorage, _ id: String, body: JSONValue = [:], deleted: Bool = false,
        channels: Set<String> = ["a"]
    ) throws(GatewayError) -> StoredDocument? {
        try storage.update(documentID: id) { current in
            var document = current ?? StoredDocument(id: id)
            let parent = document.winner?.id
            guard let revision = try? document.tree.addLocalEdit(parent: parent, body: body, deleted: deleted) else {
                return nil
            }
            document.channels[revision] = channels
            return document
        }
    }

    @Test("After a write the counts are the last ones plus what the write changed, not a new scan of the rows")
    func writesKeepTheTotalsWithoutCounting() throws {
        try withStorage { storage, reader in
            try write(storage, "a", body: ["v": 1])
            #expect(try storage.statistics.documentCount == 1)
            // A row the storage's connection did not write (another connection; the gateway never does this): a
            // scan would count it, totals kept by the writes do not.
            try reader.execute(
                """
                INSERT INTO documents (sequence, id, deleted, rev, body, metadata)
                SELECT 1000, 'stray', deleted, rev, body, metadata FROM documents WHERE id = 'a'
                """)
            try write(storage, "b", body: ["v": 2])
            try write(storage, "b", body: ["v": 3])
            #expect(try storage.statistics.documentCount == 2)
            #expect(try scanned(reader).documentCount == 3)
            // Compaction rewrites bodies (here b's first) and keeps the totals: the next read does not count the rows.
            #expect(try storage.compact() > 0)
            #expect(try storage.statistics.documentCount == 2)
        }
    }

    @Test("Counts and body bytes stay those of a scan through creates, edits, deletions, purges and failed writes")
    func totalsStayExact() throws {
        try withStorage { storage, reader in
            var generator = SplitMix64(state: 2026)
            let ids = (0..<12).map { "doc\($0)" }
            _ = try storage.statistics  // counted once, then kept by the writes
            for step in 0..<300 {
                let id = ids.randomElement(using: &generator)!
                let padding = String(repeating: "x", count: step % 40)
                let body: JSONValue = ["step": .int(Int64(step)), "pad": .string(padding)]
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    try write(storage, id, body: body)
                case 4..<6:
                    try write(storage, id, deleted: true)
                case 6:
                    try storage.purge(documentID: id, expiredBy: nil)
                case 7 where step % 3 == 0:
                    // Compaction rewrites the bodies of edited and deleted documents: the totals follow.
                    _ = try storage.compact()
                case 7:
                    // Fails halfway, after its document row was written: nothing of it stays.
                    #expect(throws: GatewayError.self) { try write(storage, id, body: body, channels: ["a", "boom"]) }
                case 8:
                    // A batch whose one refused transform leaves the others.
                    try storage.inBatch { storage throws(GatewayError) in
                        try write(storage, id, body: body)
                        _ = try? storage.update(documentID: "refused") { _ throws(GatewayError) in
                            throw .forbidden("no")
                        }
                        try storage.purge(documentID: ids.randomElement(using: &generator)!, expiredBy: nil)
                        try write(storage, ids.randomElement(using: &generator)!, deleted: true)
                    }
                default:
                    // A batch failing halfway: rolled back whole.
                    #expect(throws: GatewayError.self) {
                        try storage.inBatch { storage throws(GatewayError) in
                            try write(storage, id, body: body)
                            try write(storage, "broken", channels: ["boom"])
                        }
                    }
                }
                #expect(counts(try storage.statistics) == counts(try scanned(reader)), "step \(step)")
            }
        }
    }

    @Test("Totals apply a transaction's changes only when they were current when it began")
    func transactionsApplyOnlyToCurrentTotals() {
        var totals = DocumentTotals()
        totals.begin(atChanges: 5)
        totals.recordInsert(isDeleted: false, bytes: 10)
        totals.commit(atChanges: 6)
        #expect(totals.current(atChanges: 6) == nil)  // never counted
        totals.store(StorageStatistics(documentCount: 1, deletedDocumentCount: 1, externalSize: 50), atChanges: 6)
        totals.begin(atChanges: 6)
        totals.recordRemoval(isDeleted: false, bytes: 20)
        totals.recordInsert(isDeleted: true, bytes: 2)
        totals.commit(atChanges: 9)
        let expected = StorageStatistics(documentCount: 0, deletedDocumentCount: 2, externalSize: 32)
        #expect(totals.current(atChanges: 9) == expected)
        totals.begin(atChanges: 10)  // a change the totals did not see came first
        totals.recordInsert(isDeleted: false, bytes: 1)
        totals.commit(atChanges: 11)
        #expect(totals.current(atChanges: 11) == nil)
    }

    @Test("A rolled-back transaction leaves the totals; a savepoint rolled back inside one makes them unknown")
    func rollbacks() {
        var totals = DocumentTotals()
        totals.store(StorageStatistics(documentCount: 3, externalSize: 30), atChanges: 1)
        totals.begin(atChanges: 1)
        totals.recordInsert(isDeleted: false, bytes: 10)
        totals.rollback(atChanges: 4)
        #expect(totals.current(atChanges: 4) == StorageStatistics(documentCount: 3, externalSize: 30))
        totals.begin(atChanges: 4)
        totals.recordInsert(isDeleted: false, bytes: 10)
        totals.forgetOpenChanges()
        totals.recordInsert(isDeleted: false, bytes: 10)
        totals.commit(atChanges: 7)
        #expect(totals.current(atChanges: 7) == nil)
    }
}
