import Couchette
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct DocumentTests {
    @Test func savesAndReadsTypedValues() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let doc = MutableDocument(id: "user1.2F5FB3E4")
            .setString("task-list", forKey: "type")
            .setInt(3, forKey: "count")
            .setInt64(9_007_199_254_740_993, forKey: "big")
            .setDouble(2.5, forKey: "weight")
            .setBoolean(true, forKey: "complete")
            .setDate(date, forKey: "createdAt")
            .setArray(["a", 1, ["nested": true]], forKey: "tags")
            .setDictionary(["id": "user1", "n": 2], forKey: "owner")
            .setNull(forKey: "nothing")
        try lists.save(document: doc)
        #expect(doc.revisionID?.hasPrefix("1-") == true)
        #expect(doc.sequence == 1)

        let read = try #require(try lists.document(id: "user1.2F5FB3E4"))
        #expect(read.revisionID == doc.revisionID)
        #expect(read.string(forKey: "type") == "task-list")
        #expect(read.int(forKey: "count") == 3)
        #expect(read.int64(forKey: "big") == 9_007_199_254_740_993)
        #expect(read.double(forKey: "weight") == 2.5)
        #expect(read.boolean(forKey: "complete"))
        #expect(read.date(forKey: "createdAt") == date)
        #expect(read.string(forKey: "createdAt") == "2023-11-14T22:13:20.250Z")
        #expect(read.array(forKey: "tags")?.dictionary(at: 2)?.value(forKey: "nested") as? Bool == true)
        #expect(read.dictionary(forKey: "owner")?.value(forKey: "id") as? String == "user1")
        // null vs missing
        #expect(read.contains(key: "nothing"))
        #expect(read.value(forKey: "nothing") is NSNull)
        #expect(!read.contains(key: "missing"))
        #expect(read.value(forKey: "missing") == nil)
        #expect(read.string(forKey: "count") == nil)
        #expect(read.int(forKey: "missing") == 0)
        #expect(read.keys.count == 9)
        #expect(lists.count == 1)
    }

    /// `Document.timestamp`: when this database last stored a revision of the document — set by a save (on the
    /// saved document too), kept by reading, moved by the next save and by a deletion, kept across reopening.
    @Test func timestampsFollowSaves() throws {
        let directory = TemporaryDirectory()
        var db = try directory.open()
        let tasks = try db.defaultCollection()
        let before = Date()
        let document = MutableDocument(id: "t").setString("Milk", forKey: "task")
        #expect(document.timestamp == nil)
        try tasks.save(document: document)
        let saved = try #require(document.timestamp)
        #expect(saved >= before.addingTimeInterval(-1) && saved <= Date().addingTimeInterval(1))
        #expect(try tasks.document(id: "t")?.timestamp == saved)
        let edit = try #require(try tasks.document(id: "t")).toMutable().setBoolean(true, forKey: "done")
        try tasks.save(document: edit)
        let edited = try #require(edit.timestamp)
        #expect(edited >= saved)
        try db.close()
        db = try directory.open()
        defer { try? db.close() }
        #expect(try db.defaultCollection().document(id: "t")?.timestamp == edited)
        let deletion = try #require(try db.defaultCollection().document(id: "t")).toMutable()
        try db.defaultCollection().delete(document: deletion)
        #expect(try #require(deletion.timestamp) >= edited)
    }

    @Test func generatesIDsAndParsesJSON() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let doc = MutableDocument()
        #expect(doc.id.count == 32)
        #expect(MutableDocument().id != doc.id)
        let fromJSON = try MutableDocument(id: "j", json: #"{"name":"Groceries","n":[1,2]}"#)
        try db.defaultCollection().save(document: fromJSON)
        #expect(try db.defaultCollection().document(id: "j")?.toJSON() == #"{"n":[1,2],"name":"Groceries"}"#)
        #expect(throws: CouchetteError.self) { try MutableDocument(id: "x", json: "[1]") }
        #expect(throws: CouchetteError.self) { try MutableDocument(id: "x", json: "{bad") }
    }

    @Test func updatesKeepHistoryAndUnchangedSavesAreNoOps() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let doc = MutableDocument(id: "l", data: ["name": "Groceries"])
        try lists.save(document: doc)
        let first = doc.revisionID
        try lists.save(document: doc)
        #expect(doc.revisionID == first)
        #expect(lists.lastSequence == 1)

        let edit = try #require(try lists.document(id: "l")).toMutable().setString("Shopping", forKey: "name")
        try lists.save(document: edit)
        #expect(edit.revisionID?.hasPrefix("2-") == true)
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "Shopping")
        #expect(try lists.revisionTree(documentID: "l")?.nodes.map(\.revisionID) == [first!, edit.revisionID!])
    }

    @Test func concurrencyControlAndConflictHandler() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.save(document: MutableDocument(id: "l", data: ["name": "A", "count": 1]))
        let stale = try #require(try lists.document(id: "l")).toMutable()
        let fresh = try #require(try lists.document(id: "l")).toMutable()
        try lists.save(document: fresh.setString("B", forKey: "name"))

        #expect(try !lists.save(document: stale.setInt(2, forKey: "count"), concurrencyControl: .failOnConflict))
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "B")

        let merged = try lists.save(document: stale) { mine, current in
            mine.setString(current?.string(forKey: "name"), forKey: "name")
            return true
        }
        #expect(merged)
        let result = try #require(try lists.document(id: "l"))
        #expect(result.string(forKey: "name") == "B" && result.int(forKey: "count") == 2)
        #expect(result.revisionID?.hasPrefix("3-") == true)
        #expect(try lists.conflictingRevisions(documentID: "l").count == 1)

        let refused = try lists.save(document: fresh.setString("C", forKey: "name")) { _, _ in false }
        #expect(!refused)

        // Last write wins overwrites.
        try lists.save(document: fresh.setString("D", forKey: "name"), concurrencyControl: .lastWriteWins)
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "D")
    }

    @Test func deleteMakesATombstoneAndPurgeRemovesEverything() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let doc = MutableDocument(id: "l", data: ["name": "A"])
        try lists.save(document: doc)
        try lists.delete(document: doc)
        #expect(try lists.document(id: "l") == nil)
        #expect(lists.count == 0)
        let tombstone = try #require(try lists.currentRevision(documentID: "l"))
        #expect(tombstone.isDeletion && tombstone.isGone)
        #expect(tombstone.revisionID?.hasPrefix("2-") == true)
        #expect(throws: CouchetteError.self) { try lists.delete(document: doc) }

        // Saving a new document with the ID continues after the tombstone.
        let revived = MutableDocument(id: "l", data: ["name": "B"])
        try lists.save(document: revived)
        #expect(revived.revisionID?.hasPrefix("3-") == true)

        try lists.purge(id: "l")
        #expect(try lists.currentRevision(documentID: "l") == nil)
        #expect(throws: CouchetteError.self) { try lists.purge(id: "l") }
    }

    @Test func deleteWithFailOnConflict() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.save(document: MutableDocument(id: "l", data: ["v": 1]))
        let stale = try #require(try lists.document(id: "l"))
        try lists.save(document: stale.toMutable().setInt(2, forKey: "v"))
        #expect(try !lists.delete(document: stale, concurrencyControl: .failOnConflict))
        #expect(try lists.document(id: "l") != nil)
        #expect(try lists.delete(document: stale, concurrencyControl: .lastWriteWins))
        #expect(try lists.document(id: "l") == nil)
    }

    @Test func rejectsBadInput() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        for id in ["", "_design/x", String(repeating: "x", count: 251)] {
            do {
                try lists.save(document: MutableDocument(id: id))
                Issue.record("expected an error for \(id)")
            } catch let error as CouchetteError {
                #expect(error.status == 400)
            }
        }
        struct NotJSON {}
        do {
            try lists.save(document: MutableDocument(id: "x").setValue(NotJSON(), forKey: "bad"))
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.code == .badInput)
            #expect(error.message.contains("bad"))
        }
        #expect(throws: CouchetteError.self) {
            try lists.save(document: MutableDocument(id: "x").setValue(Data([1]), forKey: "raw"))
        }
        #expect(throws: CouchetteError.self) {
            try lists.save(document: MutableDocument(id: "x").setValue(1, forKey: "_secret"))
        }
        #expect(lists.count == 0)
        #expect(lists.lastSequence == 0)
    }
}

@Suite(.timeLimit(.minutes(5))) struct SequenceTests {
    @Test func sequencesSurviveReopeningAndAreNeverReusedAfterAPurge() throws {
        let directory = TemporaryDirectory()
        var db = try directory.open()
        var lists = try db.defaultCollection()
        for index in 1...3 { try lists.save(document: MutableDocument(id: "d\(index)")) }
        try lists.purge(id: "d3")
        try db.close()
        db = try directory.open()
        lists = try db.defaultCollection()
        #expect(lists.lastSequence == 3)
        let next = MutableDocument(id: "d4")
        try lists.save(document: next)
        #expect(next.sequence == 4)
        try db.close()
    }

    @Test func nestedBadValuesAreNamedByTheirPath() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        struct Opaque {}
        do {
            try db.defaultCollection().save(
                document: MutableDocument(id: "x").setDictionary(["items": [1, ["deep": Opaque()]]], forKey: "owner"))
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.message.hasPrefix("owner.items[1].deep: "), "\(error.message)")
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct BodyRetentionTests {
    @Test func theParentOfTheCurrentRevisionKeepsItsBodyAfterASave() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let doc = MutableDocument(id: "l", data: ["name": "first"])
        try lists.save(document: doc)
        let first = try #require(doc.revisionID)
        try lists.save(document: doc.setString("second", forKey: "name"))
        let second = try #require(doc.revisionID)
        #expect(try lists.revision(documentID: "l", revisionID: first)?.properties?["name"] as? String == "first")
        try lists.save(document: doc.setString("third", forKey: "name"))
        #expect(try lists.revision(documentID: "l", revisionID: second)?.properties?["name"] as? String == "second")
        #expect(try lists.revision(documentID: "l", revisionID: first)?.propertiesAvailable == false)
        #expect(try lists.document(id: "l")?.string(forKey: "name") == "third")
    }

    @Test func savingALosingBranchKeepsTheWinnersBody() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.putExistingRevision(documentID: "c", properties: ["v": "z"], revisionHistory: ["2-z", "1-a"])
        try lists.putExistingRevision(documentID: "c", properties: ["v": "b"], revisionHistory: ["2-b", "1-a"])
        let loser = try #require(try lists.revision(documentID: "c", revisionID: "2-b"))
        let edit = loser.createRevision()
        edit["v"] = "b2"
        _ = try edit.saveAllowingConflict()
        let winner = try #require(try lists.document(id: "c"))
        // 3-… on the losing branch now wins by generation; the old winner keeps its body as a leaf.
        #expect(winner.string(forKey: "v") == "b2")
        #expect(try lists.revision(documentID: "c", revisionID: "2-z")?.properties?["v"] as? String == "z")
        // Saving the current document again through the Lite API keeps the other leaf's body too.
        try lists.save(document: winner.toMutable().setString("b3", forKey: "v"))
        #expect(try lists.revision(documentID: "c", revisionID: "2-z")?.properties?["v"] as? String == "z")
        #expect(try lists.conflictingRevisions(documentID: "c").count == 2)
    }
}
