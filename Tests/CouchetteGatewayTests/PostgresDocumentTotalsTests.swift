import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// PostgreSQL's document counts and body bytes (``PostgresDocumentTotals``): kept by triggers, they stay those of a
/// scan of the table through every kind of write — updates, batches, single-statement writes, deletions, purges, a
/// rolled-back batch, compaction — from two storages (two connections, two stripes) at once.
@Suite(.timeLimit(.minutes(2))) struct PostgresDocumentTotalsTests {
    private static func edited(_ document: StoredDocument?, id: String, body: JSONValue, deleted: Bool = false)
        -> StoredDocument?
    {
        var document = document ?? StoredDocument(id: id)
        _ = try? document.tree.addLocalEdit(parent: document.winner?.id, body: body, deleted: deleted)
        return document
    }

    @Test func countsStayThoseOfAScanThroughEveryKindOfWrite() async throws {
        let server = try await PostgresServer.sharedServer()
        let url = try await server.newDatabase()
        let name = try #require(url.split(separator: "/").last.map(String.init))
        try await offCooperativeThreads {
            let location = try StorageLocation(parsing: url)
            let nodes = [try location.openStorage(databaseName: "db"), try location.openStorage(databaseName: "db")]
            defer { for node in nodes { node.close() } }
            func scanned() throws -> [Int] {
                try server.psql(
                    """
                    SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted),
                        coalesce(sum(length(body)), 0) FROM couchette_db.documents
                    """, database: name
                ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { Int($0) }
            }
            func kept() throws -> [Int] {
                let statistics = try nodes[0].statistics
                return [statistics.documentCount, statistics.deletedDocumentCount, statistics.externalSize]
            }
            var random = SplitMix64(state: 50)
            let ids = (0..<40).map { "doc\($0)" }
            for step in 0..<60 {
                let node = nodes[Int(random.next() % 2)]
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let body: JSONValue = ["text": .string(String(repeating: "x", count: Int(random.next() % 50)))]
                switch random.next() % 6 {
                case 0:
                    try node.update(documentID: id) { Self.edited($0, id: id, body: body) }
                case 1:
                    try node.update(documentID: id) { current in
                        current.flatMap { Self.edited($0, id: id, body: [:], deleted: true) }
                    }
                case 2:
                    try node.purge(documentID: id)
                case 3:
                    let batch = Array(Set((0..<3).map { _ in ids[Int(random.next() % UInt64(ids.count))] }))
                    try node.inBatch(updating: batch) { storage throws(GatewayError) in
                        for id in batch { try storage.update(documentID: id) { Self.edited($0, id: id, body: body) } }
                    }
                case 4:
                    // Rolled back: counts nothing.
                    _ = try? node.inBatch { storage throws(GatewayError) in
                        try storage.update(documentID: "rolled-back-\(step)") {
                            Self.edited($0, id: "rolled-back-\(step)", body: body)
                        }
                        try storage.purge(documentID: id)
                        throw GatewayError.forbidden("rolled back")
                    }
                default:
                    // The single-statement writer.
                    let snapshot = try node.document(id: id)
                    if let document = Self.edited(snapshot, id: id, body: body) {
                        _ = try node.store([
                            EncodedWrite(document: document, previous: snapshot, attachments: [], encodingRows: true)
                        ])
                    }
                }
                #expect(try kept() == scanned(), "step \(step)")
            }
            _ = try nodes[1].compact()
            #expect(try kept() == scanned(), "after compaction")
            #expect(try kept()[0] > 0)
        }
    }
}
