import Couchette
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct ContainerTests {
    @Test func nestedContainersRoundTripWithTypedGettersAtEveryLevel() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let address = MutableDictionaryObject()
            .setString("Paris", forKey: "city")
            .setInt(75001, forKey: "zip")
            .setArray(MutableArrayObject().addDouble(48.86).addDouble(2.34), forKey: "location")
        let owner = MutableDictionaryObject(data: ["name": "Alice", "admin": true])
            .setDictionary(address, forKey: "address")
            .setDate(date, forKey: "since")
        let tags = MutableArrayObject()
            .addString("home")
            .addInt64(9_007_199_254_740_993)
            .addArray(MutableArrayObject(data: ["x", ["y": 1]]))
            .addDictionary(MutableDictionaryObject().setBoolean(false, forKey: "done"))
            .addValue(nil)
        try lists.save(
            document: MutableDocument(id: "l1").setDictionary(owner, forKey: "owner").setArray(tags, forKey: "tags"))

        let read = try #require(try lists.document(id: "l1"))
        let readOwner = try #require(read.dictionary(forKey: "owner"))
        #expect(readOwner.count == 4)
        #expect(readOwner.keys == ["address", "admin", "name", "since"])
        #expect(Array(readOwner) == ["address", "admin", "name", "since"])
        #expect(readOwner.string(forKey: "name") == "Alice")
        #expect(readOwner.boolean(forKey: "admin"))
        #expect(readOwner.date(forKey: "since") == date)
        #expect(readOwner.contains(key: "name") && !readOwner.contains(key: "nope"))
        let readAddress = try #require(readOwner.dictionary(forKey: "address"))
        #expect(readAddress.string(forKey: "city") == "Paris")
        #expect(readAddress.int(forKey: "zip") == 75001)
        #expect(readAddress.number(forKey: "zip") == 75001)
        let location = try #require(readAddress.array(forKey: "location"))
        #expect(location.count == 2)
        #expect(location.double(at: 0) == 48.86)
        #expect(location.float(at: 1) == Float(2.34))
        #expect(location.double(at: 2) == 0)  // out of range

        let readTags = try #require(read.array(forKey: "tags"))
        #expect(readTags.count == 5)
        #expect(readTags.string(at: 0) == "home")
        #expect(readTags.int64(at: 1) == 9_007_199_254_740_993)
        #expect(readTags.array(at: 2)?.string(at: 0) == "x")
        #expect(readTags.array(at: 2)?.dictionary(at: 1)?.int(forKey: "y") == 1)
        #expect(readTags.dictionary(at: 3)?.contains(key: "done") == true)
        #expect(readTags.dictionary(at: 3)?.boolean(forKey: "done") == false)
        #expect(readTags.value(at: 4) is NSNull)
        #expect(readTags.value(at: 5) == nil)
        #expect(readTags.string(at: -1) == nil)
        #expect(readTags.array(at: 0) == nil && readTags.dictionary(at: 0) == nil)
        // Foundation views and iteration.
        #expect(readTags.toArray().count == 5)
        #expect((readTags.toArray()[2] as? [Any])?.first as? String == "x")
        #expect(readTags.compactMap { $0 as? String } == ["home"])
        #expect((readOwner.toDictionary()["address"] as? [String: Any])?["city"] as? String == "Paris")
        // Reading the same container twice gives equal objects.
        #expect(read.dictionary(forKey: "owner") == readOwner)
        #expect(read.array(forKey: "tags") != read.array(forKey: "owner"))
        #expect(read.array(forKey: "owner") == nil)
        #expect(read.dictionary(forKey: "tags") == nil)
    }

    @Test func mutableArrayAddsInsertsSetsAndRemoves() throws {
        let array = MutableArrayObject()
            .addString("a")
            .addInt(2)
            .addBoolean(true)
            .insertString("first", at: 0)
            .insertDouble(1.5, at: 4)
        #expect(array.toArray().count == 5)
        #expect(array.string(at: 0) == "first")
        #expect(array.string(at: 1) == "a")
        #expect(array.int(at: 2) == 2)
        #expect(array.boolean(at: 3))
        #expect(array.double(at: 4) == 1.5)
        array.removeValue(at: 1).setString("b", at: 0).setValue(nil, at: 1)
        #expect(array.toJSON() == #"["b",null,true,1.5]"#)
        #expect(array.count == 4)
        array[0] = "c"
        #expect(array.string(at: 0) == "c")
        array.setData(["x", 1, ["k": "v"]])
        #expect(array.dictionary(at: 2)?.string(forKey: "k") == "v")
        try array.setJSON(#"[1, "two", [3]]"#)
        #expect(array.toJSON() == #"[1,"two",[3]]"#)
        #expect(try MutableArrayObject(json: "[true]").boolean(at: 0))
        #expect(throws: CouchetteError.self) { try MutableArrayObject(json: #"{"a":1}"#) }
        #expect(throws: CouchetteError.self) { try array.setJSON("[1,") }
        // An array and its copy are equal until one changes.
        let copy = array.toMutable()
        #expect(copy == array)
        copy.array(at: 2)?.addInt(4)
        #expect(copy != array)
        #expect(array.array(at: 2)?.count == 1)
    }

    @Test func mutableDictionarySetsRemovesAndSerializes() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let dictionary = MutableDictionaryObject()
            .setString("Alice", forKey: "name")
            .setInt64(42, forKey: "age")
            .setFloat(1.5, forKey: "score")
            .setNumber(7, forKey: "rank")
            .setDate(date, forKey: "since")
            .setNull(forKey: "nothing")
        #expect(dictionary.keys == ["age", "name", "nothing", "rank", "score", "since"])
        #expect(dictionary.date(forKey: "since") == date)
        #expect(dictionary.string(forKey: "since") == "2023-11-14T22:13:20.000Z")
        #expect(dictionary.value(forKey: "since") as? String == "2023-11-14T22:13:20.000Z")
        #expect(dictionary.float(forKey: "score") == 1.5)
        #expect(dictionary.int(forKey: "rank") == 7)
        dictionary.removeValue(forKey: "rank").setString(nil, forKey: "age")
        dictionary["city"] = "Paris"
        #expect(!dictionary.contains(key: "rank") && !dictionary.contains(key: "age"))
        #expect(dictionary.contains(key: "nothing") && dictionary.value(forKey: "nothing") is NSNull)
        #expect(
            dictionary.toJSON()
                == #"{"city":"Paris","name":"Alice","nothing":null,"score":1.5,"since":"2023-11-14T22:13:20.000Z"}"#)
        try dictionary.setJSON(#"{"b":[1],"a":{"c":true}}"#)
        #expect(Array(dictionary) == ["a", "b"])
        #expect(dictionary.dictionary(forKey: "a")?.boolean(forKey: "c") == true)
        #expect(throws: CouchetteError.self) { try dictionary.setJSON("[1]") }
        #expect(try MutableDictionaryObject(json: #"{"k":"v"}"#).string(forKey: "k") == "v")
        dictionary.setData(nil)
        #expect(dictionary.count == 0 && dictionary.toJSON() == "{}")
    }

    @Test func mutableContainersAreSavedInsideDocumentsWithTheirLaterEdits() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        let tags = MutableArrayObject().addString("a")
        let meta = MutableDictionaryObject(data: ["priority": 1])
        let doc = MutableDocument(id: "t1").setArray(tags, forKey: "tags").setDictionary(meta, forKey: "meta")
        // Edits after setting are the document's, as in Couchbase Lite.
        tags.addString("b")
        meta.setBlob(Blob(contentType: "text/plain", data: Data("hello".utf8)), forKey: "note")
        #expect(doc.array(forKey: "tags") === tags)
        try tasks.save(document: doc)

        let read = try #require(try tasks.document(id: "t1"))
        #expect(read.array(forKey: "tags")?.toArray() as? [String] == ["a", "b"])
        #expect(read.dictionary(forKey: "meta")?.int(forKey: "priority") == 1)
        #expect(read.dictionary(forKey: "meta")?.blob(forKey: "note")?.content == Data("hello".utf8))
        #expect(read["meta"]["note"].blob?.contentType == "text/plain")
        // An immutable container read from one document can be set into another.
        try tasks.save(document: MutableDocument(id: "t2").setArray(read.array(forKey: "tags"), forKey: "copied"))
        #expect(try tasks.document(id: "t2")?.toJSON() == #"{"copied":["a","b"]}"#)
        // A Foundation array still works, and nil removes.
        let plain = MutableDocument(id: "t3").setArray(["x"], forKey: "list").setDictionary(["k": 1], forKey: "map")
        plain.setArray(nil, forKey: "map")
        try tasks.save(document: plain)
        #expect(try tasks.document(id: "t3")?.toJSON() == #"{"list":["x"]}"#)
    }

    @Test func nestedValuesThatAreNotJSONAreNamedByTheirPath() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        struct Opaque {}
        let owner = MutableDictionaryObject().setArray(MutableArrayObject().addInt(1).addValue(Opaque()), forKey: "items")
        do {
            try db.defaultCollection().save(document: MutableDocument(id: "x").setDictionary(owner, forKey: "owner"))
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.code == .badInput)
            #expect(error.message.hasPrefix("owner.items[1]: "), "\(error.message)")
        }
    }

    @Test func editingANestedDictionaryOfAMutableDocumentThenSaving() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.save(
            document: MutableDocument(id: "l1").setDictionary(
                ["name": "Alice", "address": ["city": "Paris"]], forKey: "owner"
            ).setArray(["a", ["b"]], forKey: "tags"))

        // Live nested containers: edits through them are the document's.
        let edit = try #require(try lists.document(id: "l1")?.toMutable())
        let owner = try #require(edit.dictionary(forKey: "owner"))
        owner.setString("Bob", forKey: "name")
        owner.dictionary(forKey: "address")?.setString("Lyon", forKey: "city")
        edit.array(forKey: "tags")?.array(at: 1)?.addString("c")
        #expect(edit.dictionary(forKey: "owner") === owner)
        #expect(edit.string(forKey: "owner") == nil)
        #expect((edit.value(forKey: "owner") as? [String: Any])?["name"] as? String == "Bob")
        try lists.save(document: edit)
        var read = try #require(try lists.document(id: "l1"))
        #expect(read["owner"]["name"].string == "Bob")
        #expect(read["owner"]["address"]["city"].string == "Lyon")
        #expect(read["tags"][1].array?.toArray() as? [String] == ["b", "c"])

        // The same references keep editing the document after the save.
        owner.setInt(30, forKey: "age")
        try lists.save(document: edit)
        read = try #require(try lists.document(id: "l1"))
        #expect(read["owner"]["age"].int == 30)
        #expect(read.revisionID?.hasPrefix("3-") == true)

        // The copy-and-set-back way works too.
        let other = try #require(try lists.document(id: "l1")?.toMutable())
        let copied = try #require(other.dictionary(forKey: "owner")?.toMutable())
        copied.removeValue(forKey: "age")
        #expect(other["owner"]["age"].int == 30)  // a copy is not live
        try lists.save(document: other.setDictionary(copied, forKey: "owner"))
        #expect(try lists.document(id: "l1")?["owner"]["age"].exists == false)
    }

    @Test func mutableDocumentCopiesAreDeep() throws {
        let original = MutableDocument(id: "d").setDictionary(MutableDictionaryObject().setInt(1, forKey: "n"), forKey: "box")
        let copy = original.toMutable()
        copy.dictionary(forKey: "box")?.setInt(2, forKey: "n")
        #expect(original["box"]["n"].int == 1)
        #expect(copy["box"]["n"].int == 2)
        #expect(copy.id == "d")
        let immutable = try MutableDictionaryObject(json: #"{"a":[1]}"#)
        let mutable = immutable.toMutable()
        mutable.array(forKey: "a")?.addInt(2)
        #expect(immutable.toJSON() == #"{"a":[1]}"#)
        #expect(mutable.toJSON() == #"{"a":[1,2]}"#)
    }

    @Test func mutableContainersAreThreadSafe() {
        let array = MutableArrayObject()
        let dictionary = MutableDictionaryObject()
        DispatchQueue.concurrentPerform(iterations: 1000) { index in
            array.addInt(index)
            dictionary.setInt(index, forKey: "k\(index % 10)")
            _ = array.toJSON()
        }
        #expect(array.count == 1000)
        #expect(Set(array.compactMap { $0 as? Int }).count == 1000)
        #expect(dictionary.count == 10)
    }
}
