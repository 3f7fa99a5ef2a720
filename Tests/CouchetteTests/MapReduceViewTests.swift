import Couchette
import Foundation
import Synchronization
import Testing

/// Map/reduce views: the tutorial's two views, incremental updates, versions, query options and reduces.
@Suite(.timeLimit(.minutes(5))) struct MapReduceViewTests {
    /// Counts map calls.
    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
        func reset() { value.withLock { $0 = 0 } }
    }

    static func saveList(_ db: Database, _ id: String, name: String) throws {
        _ = try db.defaultCollection().putProperties(["type": "task-list", "name": name, "owner": "user1"], documentID: id)
    }

    /// Saves a task (a new revision of it when it exists).
    static func saveTask(_ db: Database, _ id: String, list: String, complete: Bool) throws {
        var properties: [String: Any] = [
            "type": "task", "task": "Task \(id)", "complete": complete, "taskList": ["id": list, "owner": "user1"],
        ]
        if let current = try db.defaultCollection().document(id: id)?.revisionID { properties["_rev"] = current }
        _ = try db.defaultCollection().putProperties(properties, documentID: id)
    }

    /// The tutorial's list view, as written there (ListsViewController.swift).
    static func listsByName(_ db: Database, counter: Counter? = nil) throws -> MapReduceView {
        let listsView = try db.view(named: "list/listsByName")
        if listsView.mapBlock == nil {
            listsView.setMapBlock({ (doc, emit) in
                counter?.increment()
                if let type: String = doc["type"] as? String, let name = doc["name"], type == "task-list" {
                    emit(name, nil)
                }
            }, version: "1.0")
        }
        return listsView
    }

    /// The tutorial's incomplete-tasks view, as written there.
    static func incompleteTasksCount(_ db: Database) throws -> MapReduceView {
        let incompTasksCountView = try db.view(named: "list/incompleteTasksCount")
        if incompTasksCountView.mapBlock == nil {
            incompTasksCountView.setMapBlock({ (doc, emit) in
                if let type: String = doc["type"] as? String, type == "task" {
                    if let list = doc["taskList"] as? [String: AnyObject], let listId = list["id"],
                        let complete = doc["complete"] as? Bool, !complete
                    {
                        emit(listId, nil)
                    }
                }
            }, reduce: { (keys, values, rereduce) in
                return values.count
            }, version: "1.0")
        }
        return incompTasksCountView
    }

    static func keys(_ rows: QueryEnumerator) -> [String] { rows.map { $0.key as? String ?? "?" } }

    @Test func theTutorialsListViewSortsListsByNameAndFollowsChanges() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        for (id, name) in [("l1", "Groceries"), ("l2", "chores"), ("l3", "Books"), ("l4", "apples"), ("l5", "Éclairs")] {
            try Self.saveList(db, id, name: name)
        }
        try Self.saveTask(db, "t1", list: "l1", complete: false)  // not a list: not emitted
        let counter = Counter()
        let view = try Self.listsByName(db, counter: counter)
        var rows = try view.createQuery().run()
        // CouchDB (ICU) collation: letters before case, accents after the letter.
        #expect(Self.keys(rows) == ["apples", "Books", "chores", "Éclairs", "Groceries"])
        #expect(rows.map { $0.documentID ?? "" } == ["l4", "l3", "l2", "l5", "l1"])
        #expect(rows.allSatisfy { $0.value == nil })
        #expect(counter.count == 6)

        // Incremental: only the changed document is mapped again.
        counter.reset()
        _ = try db.defaultCollection().putProperties(["type": "task-list", "name": "Apricots"], documentID: "l6")
        try db.defaultCollection().document(id: "l3").map { try db.defaultCollection().delete(document: $0) }
        rows = try view.createQuery().run()
        #expect(Self.keys(rows) == ["apples", "Apricots", "chores", "Éclairs", "Groceries"])
        #expect(counter.count == 1)
        #expect(try view.lastSequenceIndexed == db.defaultCollection().lastSequence)
        #expect(!view.isStale)
        #expect(view.totalRows == 5)

        // The tutorial's search: names starting with "Gro".
        var search = view.createQuery()
        search.startKey = "Gro"
        search.endKey = "Gro"
        search.prefixMatchLevel = 1
        #expect(Self.keys(try search.run()) == ["Groceries"])
    }

    @Test func theTutorialsIncompleteTaskCountsGroupByList() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        try Self.saveList(db, "list-a", name: "A")
        try Self.saveList(db, "list-b", name: "B")
        try Self.saveTask(db, "t1", list: "list-a", complete: false)
        try Self.saveTask(db, "t2", list: "list-a", complete: false)
        try Self.saveTask(db, "t3", list: "list-a", complete: true)
        try Self.saveTask(db, "t4", list: "list-b", complete: false)
        let view = try Self.incompleteTasksCount(db)
        var query = view.createQuery()
        query.groupLevel = 1
        func counts() throws -> [String: Int] {
            Dictionary(uniqueKeysWithValues: try query.run().map { ($0.key as! String, $0.value as! Int) })
        }
        #expect(try counts() == ["list-a": 2, "list-b": 1])
        // Completing a task, adding one and deleting one update the counts.
        try Self.saveTask(db, "t1", list: "list-a", complete: true)
        try Self.saveTask(db, "t5", list: "list-b", complete: false)
        try db.defaultCollection().document(id: "t4").map { try db.defaultCollection().delete(document: $0) }
        #expect(try counts() == ["list-a": 1, "list-b": 1])
        // Without grouping: one row, the total; with mapOnly: the map rows.
        query.groupLevel = 0
        #expect(try query.run().allRows.map { $0.value as? Int } == [2])
        query.mapOnly = true
        #expect(try query.run().map { $0.sourceDocumentID ?? "" } == ["t2", "t5"])
    }

    @Test func aNewVersionRebuildsTheIndexAndTheIndexSurvivesReopening() throws {
        let directory = TemporaryDirectory()
        var db = try directory.open()
        for index in 0..<20 { _ = try db.defaultCollection().putProperties(["n": index], documentID: "d\(index)") }
        let counter = Counter()
        func define(_ db: Database, version: String, factor: Int) throws -> MapReduceView {
            let view = try db.view(named: "numbers")
            view.setMapBlock({ doc, emit in
                counter.increment()
                if let n = doc["n"] as? Int { emit(n * factor, doc["_id"]) }
            }, version: version)
            return view
        }
        var view = try define(db, version: "1", factor: 1)
        #expect(try view.createQuery().run().allRows.first?.key as? Int == 0)
        #expect(counter.count == 20)
        #expect(view.setMapBlock({ _, _ in }, version: "1") == false)

        // Reopened with the same version: nothing is mapped again.
        try db.close()
        db = try directory.open()
        defer { try? db.close() }
        counter.reset()
        view = try define(db, version: "1", factor: 1)
        #expect(try view.createQuery().run().count == 20)
        #expect(counter.count == 0)
        #expect(try db.defaultCollection().viewNames() == ["numbers"])

        // A new version maps everything again.
        view = try define(db, version: "2", factor: -1)
        let rows = try view.createQuery().run()
        #expect(rows.allRows.first?.key as? Int == -19)
        #expect(rows.allRows.first?.value as? String == "d19")
        #expect(counter.count == 20)

        try view.deleteIndex()
        #expect(view.totalRows == 0)
        #expect(view.isStale)
        try view.delete()
        #expect(try db.defaultCollection().viewNames().isEmpty)
        #expect(try db.existingView(named: "numbers") == nil)
    }

    /// A view of compound keys `[list, priority]` with value `priority`.
    static func prioritiesView(_ db: Database) throws -> MapReduceView {
        let rows: [(String, String, Int)] = [
            ("a1", "a", 1), ("a2", "a", 2), ("a3", "a", 2), ("b1", "b", 1), ("b2", "b", 3), ("c1", "c", 5),
        ]
        for (id, list, priority) in rows {
            _ = try db.defaultCollection().putProperties(["list": list, "priority": priority], documentID: id)
        }
        let view = try db.view(named: "priorities")
        view.setMapBlock({ doc, emit in
            if let list = doc["list"] as? String, let priority = doc["priority"] as? Int { emit([list, priority], priority) }
        }, reduce: BuiltInReduce.sum, version: "1")
        return view
    }

    @Test func rangeOrderPagingAndKeyOptions() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let view = try Self.prioritiesView(db)
        var query = view.createQuery()
        query.mapOnly = true
        func ids() throws -> [String] { try query.run().map { $0.sourceDocumentID ?? "" } }
        #expect(try ids() == ["a1", "a2", "a3", "b1", "b2", "c1"])
        query.descending = true
        #expect(try ids() == ["c1", "b2", "b1", "a3", "a2", "a1"])
        query.descending = false
        query.startKey = ["a", 2]
        query.endKey = ["b", 1]
        #expect(try ids() == ["a2", "a3", "b1"])
        query.inclusiveEnd = false
        #expect(try ids() == ["a2", "a3"])
        query.inclusiveStart = false
        #expect(try ids().isEmpty)
        query.inclusiveStart = true
        query.startKeyDocID = "a3"
        #expect(try ids() == ["a3"])
        query.startKeyDocID = nil
        query.inclusiveEnd = true
        query.startKey = nil
        query.endKey = ["a"]
        query.prefixMatchLevel = 1
        #expect(try ids() == ["a1", "a2", "a3"])
        query.prefixMatchLevel = 0
        query.endKey = nil
        query.skip = 1
        query.limit = 3
        #expect(try ids() == ["a2", "a3", "b1"])
        query.skip = 0
        query.limit = .max
        query.keys = [["b", 3], ["a", 2], ["z", 0]]
        #expect(try ids() == ["b2", "a2", "a3"])
        query.keys = nil
        query.postFilter = { ($0.value as? Int ?? 0) >= 2 }
        query.limit = 2
        #expect(try ids() == ["a2", "a3"])
        query.postFilter = nil
        query.limit = .max
        query.descending = true
        query.startKey = ["b", 1]
        query.endKey = ["a", 2]
        #expect(try ids() == ["b1", "a3", "a2"])
    }

    @Test func groupLevelsAndBuiltInReduces() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let view = try Self.prioritiesView(db)
        var query = view.createQuery()
        #expect(try query.run().allRows.map { $0.value as? Double } == [14])
        query.groupLevel = 1
        var rows = try query.run()
        #expect(rows.map { $0.key as? [Any] as? [String] ?? [] } == [["a"], ["b"], ["c"]])
        #expect(rows.map { $0.value as? Double } == [5, 4, 5])
        #expect(rows.allSatisfy { $0.documentID == nil && $0.document == nil })
        query.groupLevel = 2
        rows = try query.run()
        #expect(rows.count == 5)
        #expect(rows.row(at: 1).key(at: 1) as? Int == 2 && rows.row(at: 1).value as? Double == 4)
        query.groupLevel = 1
        query.limit = 1
        query.skip = 1
        #expect(try query.run().allRows.map { $0.key(at: 0) as? String } == ["b"])

        for (reduce, expected) in [(BuiltInReduce.count, 6.0), (BuiltInReduce.sum, 14.0)] {
            view.setMapBlock(view.mapBlock!, reduce: reduce, version: "1")
            #expect(MapReduceView.totalValues([try view.createQuery().run().allRows[0].value!]) == expected)
        }
        view.setMapBlock(view.mapBlock!, reduce: BuiltInReduce.stats, version: "1")
        let stats = try #require(try view.createQuery().run().allRows.first?.value as? [String: Any])
        #expect(stats["sum"] as? Double == 14)
        #expect(stats["count"] as? Int == 6)
        #expect(stats["min"] as? Double == 1)
        #expect(stats["max"] as? Double == 5)
        #expect(stats["sumsqr"] as? Double == 44)
    }

    @Test func includeDocsLinkedDocumentsAndStaleness() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        try Self.saveList(db, "list-a", name: "A")
        try Self.saveTask(db, "t1", list: "list-a", complete: false)
        let view = try db.view(named: "taskToList")
        view.setMapBlock({ doc, emit in
            if let list = doc["taskList"] as? [String: Any], let id = list["id"] { emit(doc["_id"], ["_id": id]) }
        }, version: "1")
        var query = view.createQuery()
        query.includeDocs = true
        let row = try #require(try query.run().allRows.first)
        #expect(row.sourceDocumentID == "t1")
        #expect(row.documentID == "list-a")
        #expect(row.documentProperties?["name"] as? String == "A")
        #expect(row.documentProperties?["_id"] as? String == "list-a")
        #expect(row.document?.string(forKey: "name") == "A")

        // Stale reads: never updates; after returns stale rows (then updates).
        try Self.saveTask(db, "t2", list: "list-a", complete: false)
        query.indexUpdateMode = .never
        var rows = try query.run()
        #expect(rows.count == 1 && rows.isStale)
        #expect(view.isStale)
        query.indexUpdateMode = .before
        rows = try query.run()
        #expect(rows.count == 2 && !rows.isStale)
        #expect(try rows.sequenceNumber == db.defaultCollection().lastSequence)
    }

    @Test func badOptionsAndMissingMapBlocksAreClearErrors() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let view = try db.view(named: "unset")
        var error = #expect(throws: CouchetteError.self) { try view.createQuery().run() }
        #expect(error?.code == .badInput)
        view.setMapBlock({ _, _ in }, version: "1")
        var query = view.createQuery()
        query.startKey = NSObject()
        error = #expect(throws: CouchetteError.self) { try query.run() }
        #expect(error?.code == .badInput)
        query = view.createQuery()
        query.limit = -1
        error = #expect(throws: CouchetteError.self) { try query.run() }
        #expect(error?.code == .badInput)
        // Keys that are not JSON are skipped; the rest of the index is built.
        _ = try db.defaultCollection().putProperties(["x": 1], documentID: "a")
        let odd = try db.view(named: "odd")
        odd.setMapBlock({ doc, emit in
            emit(NSObject(), nil)
            emit(doc["x"] ?? 0, nil)
        }, version: "1")
        #expect(try odd.createQuery().run().map { $0.key as? Int } == [1])
    }
}
