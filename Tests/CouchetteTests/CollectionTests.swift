import Couchette
import Testing

@Suite(.timeLimit(.minutes(5))) struct CollectionTests {
    @Test func defaultScopeAndCollectionAlwaysExist() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        #expect(collection.name == "_default")
        #expect(collection.scope.name == "_default")
        #expect(collection.fullName == "_default._default")
        #expect(try db.defaultScope().name == "_default")
        #expect(try db.scopes().map(\.name) == ["_default"])
    }

    @Test func createsListsAndDeletesCollections() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.createCollection(name: "tasks", scope: "todo")
        let lists = try db.createCollection(name: "lists", scope: "todo")
        #expect(try db.createCollection(name: "tasks", scope: "todo") == tasks)
        #expect(try db.collections(scope: "todo").map(\.fullName) == ["todo.lists", "todo.tasks"])
        #expect(try db.scopes().map(\.name) == ["_default", "todo"])
        #expect(try db.scope(name: "todo")?.collections().count == 2)
        #expect(try db.collection(name: "tasks", scope: "todo") == tasks)
        #expect(try db.collection(name: "nope", scope: "todo") == nil)

        try tasks.save(document: MutableDocument(id: "t1"))
        try lists.save(document: MutableDocument(id: "l1"))
        try tasks.save(document: MutableDocument(id: "t2"))
        // Sequences increase within each collection and are unique across the database.
        #expect(tasks.lastSequence == 3 && lists.lastSequence == 2)
        #expect(try tasks.changes(since: 0).map(\.documentID) == ["t1", "t2"])
        #expect(try lists.changes(since: 0).map(\.sequence) == [2])
        #expect(try tasks.changes(since: 1).map(\.documentID) == ["t2"])
        #expect(try tasks.document(id: "l1") == nil)
        #expect(try lists.document(id: "t1") == nil)

        try db.deleteCollection(name: "tasks", scope: "todo")
        #expect(try db.collection(name: "tasks", scope: "todo") == nil)
        #expect(throws: CouchetteError.self) { try db.deleteCollection(name: "tasks", scope: "todo") }
        // A collection deleted underneath its object.
        do {
            _ = try tasks.document(id: "t1")
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.code == .notFound)
        }
        #expect(throws: CouchetteError.self) { try tasks.save(document: MutableDocument(id: "t2")) }
        // Recreating starts empty.
        let recreated = try db.createCollection(name: "tasks", scope: "todo")
        #expect(recreated.count == 0)
    }

    @Test(arguments: ["", "_private", "%x", "has space", "dot.ted", "ünicode", String(repeating: "a", count: 252)])
    func rejectsInvalidCollectionNames(name: String) throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        #expect(throws: CouchetteError.self) { try db.createCollection(name: name, scope: "todo") }
        #expect(throws: CouchetteError.self) { try db.createCollection(name: "ok", scope: name) }
    }

    @Test func acceptsTheNamesCouchbaseLiteAllows() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        for name in ["a", "A-b_c%d", "123", String(repeating: "z", count: 251)] {
            #expect(try db.createCollection(name: name, scope: "s").name == name)
        }
    }
}
