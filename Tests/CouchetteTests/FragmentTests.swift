import Couchette
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct FragmentTests {
    /// A collection holding one task-list document, `l1`.
    private func listCollection(_ directory: TemporaryDirectory) throws -> (Database, Collection) {
        let db = try directory.open()
        let lists = try db.defaultCollection()
        try lists.save(
            document: MutableDocument(id: "l1", data: [
                "name": "Groceries",
                "count": 3,
                "weight": 2.5,
                "done": true,
                "createdAt": Date(timeIntervalSince1970: 1_700_000_000),
                "owner": ["name": "Alice", "address": ["city": "Paris"]],
                "tags": ["home", "urgent", ["label": "x"]],
                "nothing": NSNull(),
            ]))
        return (db, lists)
    }

    @Test func fragmentsChainThroughDictionariesAndArrays() throws {
        let directory = TemporaryDirectory()
        let (db, lists) = try listCollection(directory)
        defer { try? db.close() }
        let doc = try #require(try lists.document(id: "l1"))
        #expect(doc["name"].string == "Groceries")
        #expect(doc["owner"]["name"].string == "Alice")
        #expect(doc["owner"]["address"]["city"].string == "Paris")
        #expect(doc["tags"][1].string == "urgent")
        #expect(doc["tags"][2]["label"].string == "x")
        #expect(doc["count"].int == 3 && doc["count"].int64 == 3 && doc["count"].number == 3)
        #expect(doc["weight"].double == 2.5 && doc["weight"].float == 2.5)
        #expect(doc["done"].boolean)
        #expect(doc["createdAt"].date == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(doc["owner"].dictionary?.count == 2)
        #expect(doc["tags"].array?.count == 3)
        #expect(doc["tags"].value as? [Any] != nil)
        #expect(doc["owner"]["name"].exists)
        #expect(doc["nothing"].exists && doc["nothing"].value is NSNull)

        // Missing paths: exists is false and every reading is nil, 0 or false; chains never trap.
        for missing in [
            doc["nope"], doc["nope"]["deeper"], doc["owner"]["nope"], doc["name"]["x"], doc["tags"][3],
            doc["tags"][-1], doc["owner"][0], doc["tags"]["x"], doc["nope"][5]["x"],
        ] {
            #expect(!missing.exists)
            #expect(missing.value == nil && missing.string == nil && missing.number == nil)
            #expect(missing.int == 0 && missing.int64 == 0 && missing.double == 0 && missing.float == 0)
            #expect(!missing.boolean && missing.date == nil && missing.blob == nil)
            #expect(missing.array == nil && missing.dictionary == nil)
        }
        // Wrong types read as nil or 0 but exist.
        #expect(doc["name"].exists && doc["name"].int == 0 && doc["count"].string == nil)

        // Containers have fragments too.
        let tags = try #require(doc.array(forKey: "tags"))
        #expect(tags[2]["label"].string == "x")
        #expect(try #require(doc.dictionary(forKey: "owner"))["address"]["city"].string == "Paris")
    }

    @Test func mutableFragmentsWriteThroughToTheDocument() throws {
        let directory = TemporaryDirectory()
        let (db, lists) = try listCollection(directory)
        defer { try? db.close() }
        let edit = try #require(try lists.document(id: "l1")?.toMutable())
        edit["owner"]["name"].string = "Bob"
        edit["owner"]["address"]["city"].value = "Lyon"
        edit["tags"][0].string = "work"
        edit["tags"][2]["label"].int = 7
        edit["count"].int = 4
        edit["weight"].float = 1.5
        edit["done"].boolean = false
        edit["createdAt"].date = Date(timeIntervalSince1970: 0)
        edit["added"].string = "new"
        edit["nothing"].value = nil  // removes the key
        edit["owner"]["phones"].array = MutableArrayObject().addString("555")
        edit["tags"].array?.addString("late")
        // Writes with no parent, or out of range, do nothing.
        edit["nope"]["x"].string = "ignored"
        edit["tags"][99].string = "ignored"
        #expect(edit["owner"]["name"].string == "Bob")
        #expect(edit["tags"][2]["label"].int == 7)
        try lists.save(document: edit)

        let read = try #require(try lists.document(id: "l1"))
        #expect(read["owner"]["name"].string == "Bob")
        #expect(read["owner"]["address"]["city"].string == "Lyon")
        #expect(read["owner"]["phones"][0].string == "555")
        #expect(read["tags"].array?.count == 4)
        #expect(read["tags"][0].string == "work" && read["tags"][3].string == "late")
        #expect(read["tags"][2]["label"].int == 7)
        #expect(read["count"].int == 4 && read["weight"].double == 1.5 && !read["done"].boolean)
        #expect(read["createdAt"].string == "1970-01-01T00:00:00.000Z")
        #expect(read["added"].string == "new")
        #expect(!read["nothing"].exists)
        #expect(!read["nope"].exists)
    }

    @Test func subscriptAssignmentStillSetsValues() throws {
        let doc = MutableDocument(id: "d")
        doc["name"] = "Groceries"
        let count = 3
        doc["count"] = count
        doc["owner"] = ["name": "Alice"]
        #expect(doc["name"].value as? String == "Groceries")  // `doc["name"]` alone is a MutableFragment
        #expect(doc["count"].int == 3)
        #expect(doc["owner"]["name"].string == "Alice")
        doc["count"] = nil
        #expect(!doc.contains(key: "count"))
        doc["name"].value = "Shopping"
        #expect(doc.string(forKey: "name") == "Shopping")
    }

    @Test func collectionSubscriptFindsDocuments() throws {
        let directory = TemporaryDirectory()
        let (db, lists) = try listCollection(directory)
        defer { try? db.close() }
        #expect(lists["l1"].exists)
        #expect(lists["l1"].document?.id == "l1")
        #expect(lists["l1"]["owner"]["name"].string == "Alice")
        #expect(!lists["missing"].exists)
        #expect(lists["missing"].document == nil)
        #expect(!lists["missing"]["name"].exists)
        try lists.delete(document: try #require(try lists.document(id: "l1")))
        #expect(!lists["l1"].exists)
        #expect(lists["l1"]["name"].string == nil)
    }
}
