import Couchette
import Foundation
import Testing

/// All-documents queries: the five modes (the tutorial's conflict detection among them), ranges and keys.
@Suite(.timeLimit(.minutes(5))) struct AllDocumentsQueryTests {
    /// a, b, c (in conflict: two live branches), d (deleted), e.
    static func fill(_ db: Database) throws {
        let collection = try db.defaultCollection()
        for id in ["a", "b", "c", "d", "e"] { _ = try collection.putProperties(["name": id], documentID: id) }
        try Self.makeConflict(in: db, id: "c")
        try collection.document(id: "d").map { try collection.delete(document: $0) }
    }

    /// Adds a second branch from the document's first revision, as a pull of a concurrent edit would.
    static func makeConflict(in db: Database, id: String) throws {
        let collection = try db.defaultCollection()
        let first = try #require(try collection.document(id: id)?.revisionID)
        _ = try collection.putProperties(["name": id, "edit": "local", "_rev": first], documentID: id)
        try collection.putExistingRevision(
            documentID: id, properties: ["name": id, "edit": "remote"],
            revisionHistory: ["2-ffffffffffffffffffffffffffffffff", first])
    }

    static func ids(_ rows: QueryEnumerator) -> [String] { rows.map { $0.documentID ?? "?" } }

    @Test func modes() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        try Self.fill(db)
        var query = try db.createAllDocumentsQuery()
        var rows = try query.run()
        #expect(Self.ids(rows) == ["a", "b", "c", "e"])
        #expect(rows.map { $0.key as? String } == ["a", "b", "c", "e"])
        let first = rows.row(at: 0)
        #expect((first.value as? [String: Any])?["rev"] as? String == first.documentRevisionID)
        #expect(rows.allSatisfy { $0.conflictingRevisions == nil })

        query.allDocsMode = .includeDeleted
        rows = try query.run()
        #expect(Self.ids(rows) == ["a", "b", "c", "d", "e"])
        #expect((rows.row(at: 3).value as? [String: Any])?["deleted"] as? Bool == true)

        // The tutorial's conflict detection: exactly the conflicted documents, their revisions winner first.
        query.allDocsMode = .onlyConflicts
        rows = try query.run()
        #expect(Self.ids(rows) == ["c"])
        let conflicts = try #require(rows.row(at: 0).conflictingRevisions)
        #expect(conflicts.count == 2)
        #expect(conflicts.first?.revisionID == (try db.defaultCollection().document(id: "c")?.revisionID))
        #expect(Set(conflicts.compactMap { $0.properties?["edit"] as? String }) == ["local", "remote"])

        query.allDocsMode = .showConflicts
        rows = try query.run()
        #expect(Self.ids(rows) == ["a", "b", "c", "e"])
        #expect(rows.map { $0.conflictingRevisions?.count ?? 0 } == [0, 0, 2, 0])

        query.allDocsMode = .bySequence
        rows = try query.run()
        #expect(Self.ids(rows) == ["a", "b", "e", "c"])  // c changed last
        #expect(rows.map(\.sequenceNumber) == rows.map(\.sequenceNumber).sorted())
        query.startKey = rows.row(at: 1).sequenceNumber
        query.inclusiveStart = false
        #expect(Self.ids(try query.run()) == ["e", "c"])

        // Resolving the conflict (deleting the losing branch) removes the document from onlyConflicts.
        let loser = try #require(conflicts.last)
        let tombstone = loser.createRevision()
        tombstone.isDeletion = true
        _ = try tombstone.saveAllowingConflict()
        query = try db.createAllDocumentsQuery()
        query.allDocsMode = .onlyConflicts
        #expect(try query.run().count == 0)
    }

    @Test func rangesKeysAndPaging() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        for id in ["apple", "apricot", "banana", "blueberry", "cherry"] {
            _ = try collection.putProperties(["fruit": id], documentID: id)
        }
        var query = try db.createAllDocumentsQuery()
        query.startKey = "b"
        query.endKey = "c"
        #expect(Self.ids(try query.run()) == ["banana", "blueberry"])
        query.descending = true
        query.startKey = "c"
        query.endKey = "b"
        #expect(Self.ids(try query.run()) == ["blueberry", "banana"])
        query.descending = false
        query.startKey = nil
        query.endKey = "ap"
        query.prefixMatchLevel = 1
        #expect(Self.ids(try query.run()) == ["apple", "apricot"])
        query.prefixMatchLevel = 0
        query.endKey = nil
        query.skip = 1
        query.limit = 2
        #expect(Self.ids(try query.run()) == ["apricot", "banana"])
        query.skip = 0
        query.limit = .max
        query.keys = ["cherry", "nope", "apple"]
        query.includeDocs = true
        let rows = try query.run()
        #expect(Self.ids(rows) == ["cherry", "apple"])
        #expect(rows.row(at: 0).documentProperties?["fruit"] as? String == "cherry")
        query.keys = [1]
        #expect(throws: CouchetteError.self) { try query.run() }
        query.keys = nil
        query.startKey = 3
        let error = #expect(throws: CouchetteError.self) { try query.run() }
        #expect(error?.code == .badInput)
    }
}
