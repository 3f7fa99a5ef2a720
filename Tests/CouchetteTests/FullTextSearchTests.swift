import Couchette
import Foundation
import Testing

/// Full-text indexes (SQLite FTS5) searched with SQL++ `MATCH()` and ordered with `RANK()`, kept in step with saves,
/// updates and deletions.
@Suite(.timeLimit(.minutes(5))) struct FullTextSearchTests {
    static func ids(_ db: Database, _ text: String, term: String) throws -> [String] {
        let query = try db.createQuery(text)
        query.parameters = Parameters().setString(term, forName: "term")
        return try query.execute().map { $0.string(at: 0) ?? "?" }
    }

    @Test func matchRankStemmingAndUpdates() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("todo")
        defer { try? db.close() }
        let tasks = try db.createCollection(name: "tasks", scope: "todo")
        let texts = [
            ("t1", "Buy milk and bread", "from the corner shop"),
            ("t2", "Go running", "milk the cow, then more milk"),
            ("t3", "Call the café", "about the party"),
            ("t4", "Read a book", ""),
        ]
        for (id, task, notes) in texts { _ = try tasks.putProperties(["task": task, "notes": notes], documentID: id) }
        try tasks.createIndex(withName: "taskFTS", config: FullTextIndexConfiguration(["task", "notes"], language: "en"))
        #expect(try tasks.indexes() == ["taskFTS"])
        #expect(try tasks.index(withName: "taskFTS")?.name == "taskFTS")
        let search = "SELECT META().id FROM todo.tasks WHERE MATCH(taskFTS, $term) ORDER BY RANK(taskFTS) DESC, META().id"
        // Both columns are searched; the better match (milk twice, in a short text) ranks first.
        #expect(try Self.ids(db, search, term: "milk") == ["t2", "t1"])
        // English stemming: "run" finds "running"; FTS5 syntax (prefix, OR) works through the parameter.
        #expect(try Self.ids(db, search, term: "run") == ["t2"])
        #expect(try Self.ids(db, search, term: "boo* OR party") == ["t3", "t4"] || (try Self.ids(db, search, term: "boo* OR party")) == ["t4", "t3"])
        // Accents count unless ignored.
        #expect(try Self.ids(db, search, term: "cafe").isEmpty)
        try tasks.createIndex(withName: "loose", config: FullTextIndexConfiguration(["task"], ignoreAccents: true))
        #expect(try Self.ids(db, "SELECT META().id FROM todo.tasks WHERE MATCH(loose, $term)", term: "cafe") == ["t3"])

        // Saves, updates and deletions reach the index in their transactions.
        _ = try tasks.putProperties(["task": "Fetch milk"], documentID: "t5")
        let current = try #require(try tasks.document(id: "t1")?.revisionID)
        _ = try tasks.putProperties(["task": "Buy butter", "notes": "", "_rev": current], documentID: "t1")
        try tasks.document(id: "t2").map { try tasks.delete(document: $0) }
        #expect(try Self.ids(db, search, term: "milk") == ["t5"])
        #expect(try Self.ids(db, search, term: "butter") == ["t1"])
        #expect(try db.createQuery(search).explain().contains("fts_"))

        // Identical definitions do nothing; deletion removes the index and its triggers.
        try tasks.createIndex(withName: "taskFTS", config: FullTextIndexConfiguration(["task", "notes"], language: "en"))
        try tasks.deleteIndex(forName: "taskFTS")
        try tasks.deleteIndex(forName: "loose")
        #expect(try tasks.indexes().isEmpty)
        _ = try tasks.putProperties(["task": "After"], documentID: "t6")
        let error = #expect(throws: CouchetteError.self) { try Self.ids(db, search, term: "milk") }
        #expect(error?.code == .badInput, "\(String(describing: error))")
    }

    @Test func rankNeedsAMatchOnTheSameIndex() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        _ = try collection.putProperties(["text": "hello"], documentID: "a")
        try collection.createIndex(withName: "words", config: FullTextIndexConfiguration(["text"]))
        let error = #expect(throws: CouchetteError.self) {
            try db.createQuery("SELECT META().id FROM _ ORDER BY RANK(words)").execute()
        }
        #expect(error?.code == .badInput)
        #expect(try Self.ids(db, "SELECT META().id FROM _ WHERE MATCH(words, $term)", term: "hello") == ["a"])
    }
}
