import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

/// The tutorial's flows with the 1.x revision API.
@Suite(.timeLimit(.minutes(5))) struct RevisionTests {
    @Test func tutorialListLifecycleWithADeletionSeenByAListener() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let id = "user1.\(UUID().uuidString)"
        let inbox = Inbox<DocumentChange>()
        let token = lists.addDocumentChangeListener(id: id) { inbox.put($0) }
        defer { token.remove() }

        let created = try lists.putProperties(["type": "task-list", "name": "Groceries", "owner": "user1"], documentID: id)
        #expect(created.revisionID?.hasPrefix("1-") == true)
        #expect(created.properties?["_id"] as? String == id)
        #expect(created.userProperties?["name"] as? String == "Groceries")

        let document = try #require(try lists.document(id: id))
        let renamed = try document.update { revision in
            revision["name"] = "Shopping"
            return true
        }
        #expect(renamed?.revisionID?.hasPrefix("2-") == true)
        #expect(try lists.document(id: id)?.string(forKey: "name") == "Shopping")

        let tombstone = try #require(renamed).deleteDocument()
        #expect(tombstone.isDeletion)
        #expect(try lists.document(id: id) == nil)

        var seen: [DocumentChange] = []
        while seen.count < 3, let change = await next(inbox.stream) { seen.append(change) }
        #expect(seen.count == 3)
        #expect(seen.last?.isDeletion == true)
        #expect(seen.last?.revisionID == tombstone.revisionID)
        #expect(try lists.revisionTree(documentID: id)?.nodes.count == 3)
        #expect(try tombstone.history().map(\.revisionID) == [created.revisionID, renamed?.revisionID, tombstone.revisionID])
    }

    @Test func conflictsTheDeterministicWinnerAndResolutionByDeletingLosers() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let base = try lists.putProperties(["type": "task-list", "name": "Today"], documentID: "user1.list")

        // Two edits of the same revision, the second one allowing a conflict.
        let first = base.createRevision()
        first["name"] = "Text Changed"
        let winnerCandidate = try first.save()
        let second = base.createRevision()
        second["name"] = "Other Text"
        #expect(throws: CouchetteError.self) { try second.save() }
        let conflicting = try second.saveAllowingConflict()

        let revisions = try lists.conflictingRevisions(documentID: "user1.list")
        #expect(revisions.count == 2)
        let expectedWinner = [winnerCandidate, conflicting].max { $0.revisionID! < $1.revisionID! }!
        #expect(revisions[0] == expectedWinner)
        #expect(try lists.document(id: "user1.list")?.revisionID == expectedWinner.revisionID)
        #expect(try lists.changes(since: 0, includeConflicts: true).count == 2)

        // Deleting the current revision promotes the other one.
        var leaves = try lists.leafRevisions(documentID: "user1.list")
        #expect(leaves.count == 2)

        // Resolve in a transaction: keep the winner with merged properties, delete the others.
        try db.inTransaction {
            for (index, revision) in revisions.enumerated() {
                let next = revision.createRevision()
                if index == 0 {
                    next.userProperties = ["type": "task-list", "name": "Resolved"]
                } else {
                    next.isDeletion = true
                }
                _ = try next.saveAllowingConflict()
            }
            return true
        }
        #expect(try lists.conflictingRevisions(documentID: "user1.list").count == 1)
        leaves = try lists.leafRevisions(documentID: "user1.list")
        #expect(leaves.count == 2)
        #expect(leaves.filter(\.isDeletion).count == 1)
        #expect(try lists.document(id: "user1.list")?.string(forKey: "name") == "Resolved")
    }

    /// Saves and deletes through the document API keep the bodies of the other branches, unparsed, and a
    /// deletion of the current revision promotes the other branch with its body.
    @Test func documentSavesAndDeletesKeepOtherBranchesBodies() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let base = try lists.putProperties(["type": "task-list", "name": "Today"], documentID: "list")
        let first = base.createRevision()
        first["name"] = "First"
        _ = try first.save()
        let second = base.createRevision()
        second["name"] = "Second"
        _ = try second.saveAllowingConflict()
        let winnerName = try #require(try lists.document(id: "list")?.string(forKey: "name"))
        let loserName = winnerName == "First" ? "Second" : "First"

        // Two saves on the current branch: the other branch's body stays readable.
        for name in ["Third", "Fourth"] {
            let edit = try #require(try lists.document(id: "list")).toMutable()
            edit.setString(name, forKey: "name")
            try lists.save(document: edit)
        }
        let revisions = try lists.conflictingRevisions(documentID: "list")
        #expect(revisions.map { $0.properties?["name"] as? String } == ["Fourth", loserName])

        // Deleting the current document promotes the other branch, body and all.
        try lists.delete(document: try #require(try lists.document(id: "list")))
        let promoted = try #require(try lists.document(id: "list"))
        #expect(promoted.string(forKey: "name") == loserName && promoted.string(forKey: "type") == "task-list")
        // And once more: a save on the promoted branch, then the revision history reads.
        let edit = promoted.toMutable()
        edit.setString("Fifth", forKey: "name")
        try lists.save(document: edit)
        #expect(try lists.document(id: "list")?.string(forKey: "name") == "Fifth")
        #expect(try lists.leafRevisions(documentID: "list").count == 2)
    }

    @Test func nWayMergeOfTwoBranches() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        let base = try tasks.putProperties(["type": "task", "task": "Milk", "complete": false], documentID: "task1")
        let titleEdit = base.createRevision()
        titleEdit["task"] = "Oat milk"
        _ = try titleEdit.save()
        let completeEdit = base.createRevision()
        completeEdit["complete"] = true
        _ = try completeEdit.saveAllowingConflict()

        let revisions = try tasks.conflictingRevisions(documentID: "task1")
        #expect(revisions.count == 2)
        // While in conflict the branches' common ancestor keeps its body (the merge's base), read from the database.
        let stored = try #require(try tasks.revision(documentID: "task1", revisionID: base.revisionID!))
        #expect(stored.properties?["task"] as? String == "Milk")
        #expect(try revisions.map { try $0.history().first?.revisionID } == [base.revisionID, base.revisionID])
        // Merge: start from the winner, take every property another branch changed from the base.
        func json(_ value: Any?) -> JSONValue? { try? JSONValue(foundationObject: value) }
        var merged = revisions[0].userProperties ?? [:]
        for revision in revisions.dropFirst() {
            for (key, value) in revision.userProperties ?? [:] where json(value) != json(base.userProperties?[key]) {
                merged[key] = value
            }
        }
        try db.inTransaction {
            let keep = revisions[0].createRevision()
            keep.userProperties = merged
            _ = try keep.save()
            for loser in revisions.dropFirst() {
                let tombstone = loser.createRevision()
                tombstone.isDeletion = true
                _ = try tombstone.saveAllowingConflict()
            }
            return true
        }
        let result = try #require(try tasks.document(id: "task1"))
        #expect(result.string(forKey: "task") == "Oat milk")
        #expect(result.boolean(forKey: "complete"))
        #expect(try tasks.conflictingRevisions(documentID: "task1").count == 1)
        // Resolved: the base's body goes.
        #expect(try tasks.revision(documentID: "task1", revisionID: base.revisionID!)?.propertiesAvailable == false)
    }

    @Test func aPulledBranchKeepsItsBaseWithTheLocalEdit() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        let base = try tasks.putProperties(["type": "task", "task": "Milk", "complete": false], documentID: "t")
        let second = try base.createRevision(properties: ["type": "task", "task": "Milk", "complete": false, "n": 2])
        _ = try second.createRevision(properties: ["type": "task", "task": "Oat milk", "complete": false, "n": 2])
        // Another device completed the task from the second revision; its edit arrives by replication.
        try tasks.putExistingRevision(
            documentID: "t", properties: ["type": "task", "task": "Milk", "complete": true, "n": 2],
            revisionHistory: ["3-remote", second.revisionID!])
        #expect(try tasks.conflictingRevisions(documentID: "t").count == 2)
        #expect(try tasks.revision(documentID: "t", revisionID: second.revisionID!)?.propertiesAvailable == true)
        #expect(try tasks.revision(documentID: "t", revisionID: base.revisionID!)?.propertiesAvailable == false)
    }

    @Test func saveWithAnExplicitParentIs409WhenItIsNotALeaf() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let first = try lists.saveRevision(["v": 1], documentID: "d", parentRevisionID: nil)
        let second = try lists.saveRevision(["v": 2], documentID: "d", parentRevisionID: first.revisionID)
        do {
            _ = try lists.saveRevision(["v": 3], documentID: "d", parentRevisionID: first.revisionID)
            Issue.record("expected a conflict")
        } catch let error as CouchetteError {
            #expect(error.status == 409)
        }
        let branch = try lists.saveRevision(["v": 3], documentID: "d", parentRevisionID: first.revisionID, allowConflict: true)
        #expect(branch.parentRevisionID == first.revisionID)
        #expect(try lists.leafRevisions(documentID: "d").count == 2)
        #expect(throws: CouchetteError.self) {
            try lists.saveRevision(["v": 4], documentID: "d", parentRevisionID: "not-a-rev")
        }
        #expect(throws: CouchetteError.self) {
            try lists.putProperties(["v": 5], documentID: "d")  // exists, no _rev
        }
        let current = try #require(try lists.currentRevision(documentID: "d"))
        let next = try lists.putProperties(["v": 5, "_rev": current.revisionID!], documentID: "d")
        #expect(next.parentRevisionID == current.revisionID)
        #expect([second.revisionID, branch.revisionID].contains(current.revisionID))
    }

    @Test func updateRetriesOnConflict() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        _ = try lists.putProperties(["count": 0], documentID: "c")
        let document = try #require(try lists.document(id: "c"))
        var attempts = 0
        let saved = try document.update { revision in
            attempts += 1
            if attempts == 1 {
                // Someone else saves first.
                _ = try lists.putProperties(
                    ["count": 10, "_rev": try lists.currentRevision(documentID: "c")!.revisionID!], documentID: "c")
            }
            revision["count"] = ((revision["count"] as? Int) ?? 0) + 1
            return true
        }
        #expect(attempts == 2)
        #expect(saved?.properties?["count"] as? Int == 11)
        #expect(try document.update { _ in false } == nil)
    }

    @Test func putExistingRevisionKeepsIDsAndMakesConflictsSilently() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let inserted = try lists.putExistingRevision(
            documentID: "r", properties: ["name": "remote"], revisionHistory: ["3-c", "2-b", "1-a"],
            source: URL(string: "http://localhost:4984/todo"))
        #expect(inserted)
        #expect(try lists.document(id: "r")?.revisionID == "3-c")
        #expect(try lists.revision(documentID: "r", revisionID: "2-b")?.propertiesAvailable == false)
        #expect(try !lists.putExistingRevision(documentID: "r", properties: ["name": "remote"], revisionHistory: ["3-c", "2-b", "1-a"]))
        try lists.putExistingRevision(documentID: "r", properties: ["name": "other"], revisionHistory: ["3-d", "2-b"])
        #expect(try lists.conflictingRevisions(documentID: "r").map(\.revisionID) == ["3-d", "3-c"])
        try lists.putExistingRevision(documentID: "r", properties: ["_deleted": true], revisionHistory: ["4-e", "3-d"])
        #expect(try lists.document(id: "r")?.revisionID == "3-c")

        // A gap only where the history joins a known revision (what LiteCore sends after more edits than its
        // `maxHistory`): 5-x becomes 3-c's child. Anywhere else it is refused.
        #expect(throws: CouchetteError.self) {
            try lists.putExistingRevision(documentID: "r", properties: [:], revisionHistory: ["7-y", "5-w"])
        }
        #expect(throws: CouchetteError.self) {
            try lists.putExistingRevision(documentID: "r", properties: [:], revisionHistory: ["9-z", "7-y", "3-c"])
        }
        try lists.putExistingRevision(documentID: "r", properties: ["name": "joined"], revisionHistory: ["5-x", "3-c"])
        #expect(try lists.document(id: "r")?.revisionID == "5-x")
        #expect(try lists.revision(documentID: "r", revisionID: "5-x")?.parentRevisionID == "3-c")
        #expect(throws: CouchetteError.self) {
            try lists.putExistingRevision(documentID: "r", properties: [:], revisionHistory: ["bad"])
        }
        #expect(throws: CouchetteError.self) {
            try lists.putExistingRevision(documentID: "r", properties: [:], revisionHistory: [])
        }
        let missing = try lists.revsDiff(["r": ["3-c", "9-z"], "other": ["1-a"]])
        #expect(missing == ["r": ["9-z"], "other": ["1-a"]])
    }

    @Test func changesSinceASequence() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        for index in 1...5 { try lists.save(document: MutableDocument(id: "d\(index)", data: ["i": index])) }
        try lists.delete(document: try #require(try lists.document(id: "d2")))
        let changes = try lists.changes(since: 2)
        #expect(changes.map(\.documentID) == ["d3", "d4", "d5", "d2"])
        #expect(changes.last?.isDeletion == true)
        #expect(changes.map(\.sequence) == [3, 4, 5, 6])
        #expect(try lists.changes(since: 0, limit: 2).map(\.documentID) == ["d1", "d3"])
    }
}

@Suite(.timeLimit(.minutes(5))) struct PurgeRevisionsTests {
    @Test func purgesLeafRevisionsAndRemovesDocumentsLeftEmpty() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.putExistingRevision(documentID: "p", properties: ["v": "c"], revisionHistory: ["3-c", "2-b", "1-a"])
        try lists.putExistingRevision(documentID: "p", properties: ["v": "d"], revisionHistory: ["3-d", "2-b"])
        try lists.save(document: MutableDocument(id: "other"))
        let purged = try lists.purgeRevisions(["p": ["3-d", "1-a"], "other": ["9-z"], "absent": ["1-a"]])
        #expect(purged == ["p": ["3-d"]])
        #expect(try lists.leafRevisions(documentID: "p").map(\.revisionID) == ["3-c"])
        #expect(try lists.document(id: "p")?.string(forKey: "v") == "c")
        #expect(try lists.purgeRevisions(["p": ["3-c"]]) == ["p": ["3-c"]])
        #expect(try lists.currentRevision(documentID: "p") == nil)
        #expect(throws: CouchetteError.self) { try lists.purgeRevisions(["p": ["garbage"]]) }
    }
}
