import Couchette
import CouchetteSQLite
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct DatabaseTests {
    @Test func createsTheFolderWithTheSQLiteFileAndAttachments() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("todo")
        let path = try #require(db.path)
        #expect(path.hasSuffix("todo.couchette"))
        #expect(FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("db.sqlite3")))
        #expect(FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("Attachments")))
        #expect(Database.exists(withName: "todo", inDirectory: directory.path))
        #expect(!Database.exists(withName: "other", inDirectory: directory.path))
        #expect(Database.allDatabaseNames(inDirectory: directory.path) == ["todo"])
        #expect(!db.publicUUID.isEmpty && db.publicUUID != db.privateUUID)
        try db.close()
        #expect(db.path == nil)
    }

    @Test func reopeningKeepsDocumentsAndUUIDs() throws {
        let directory = TemporaryDirectory()
        var db = try directory.open()
        let uuid = db.privateUUID
        try db.defaultCollection().save(document: MutableDocument(id: "a", data: ["n": 1]))
        try db.close()
        db = try directory.open()
        #expect(db.privateUUID == uuid)
        #expect(try db.defaultCollection().document(id: "a")?.int(forKey: "n") == 1)
        try db.close()
    }

    @Test(arguments: ["", ".hidden", "a/b", "a:b", "back\\slash", String(repeating: "x", count: 241)])
    func rejectsInvalidNames(name: String) {
        let directory = TemporaryDirectory()
        #expect(throws: CouchetteError.self) { try directory.open(name) }
        do {
            _ = try directory.open(name)
        } catch let error as CouchetteError {
            #expect(error.code == .badInput && error.status == 400)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func closedDatabaseThrowsNotOpenAndClosingTwiceIsFine() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        let collection = try db.defaultCollection()
        try db.close()
        try db.close()
        #expect(throws: CouchetteError.self) { try db.defaultCollection() }
        do {
            try collection.save(document: MutableDocument(id: "x"))
            Issue.record("expected an error")
        } catch CouchetteError.Code.notOpen {
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(collection.count == 0)
    }

    @Test func deleteRemovesTheFolder() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        try db.delete()
        #expect(!Database.exists(withName: "todo", inDirectory: directory.path))
        let again = try directory.open()
        try again.close()
        try Database.delete(withName: "todo", inDirectory: directory.path)
        #expect(!Database.exists(withName: "todo", inDirectory: directory.path))
        #expect(throws: CouchetteError.self) { try Database.delete(withName: "todo", inDirectory: directory.path) }
    }

    @Test func missingDatabaseWithoutCreateIsNotFound() {
        let directory = TemporaryDirectory()
        do {
            _ = try directory.open("absent") { $0.create = false }
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.status == 404)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func readOnlyDatabaseRefusesWrites() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        try db.defaultCollection().save(document: MutableDocument(id: "a"))
        try db.close()
        let readOnly = try directory.open { $0.readOnly = true }
        #expect(try readOnly.defaultCollection().document(id: "a") != nil)
        do {
            try readOnly.defaultCollection().save(document: MutableDocument(id: "b"))
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.status == 403)
        }
        try readOnly.close()
    }

    @Test func copyInstallsAPrebuiltDatabaseWithNewUUIDs() throws {
        let directory = TemporaryDirectory()
        let seed = try directory.open("seed")
        try seed.defaultCollection().save(document: MutableDocument(id: "list1", data: ["type": "task-list"]))
        let seedPath = try #require(seed.path)
        let seedUUIDs = (seed.publicUUID, seed.privateUUID)
        try seed.close()

        try Database.copy(fromPath: seedPath, toDatabase: "todo", withConfig: directory.configuration)
        let copy = try directory.open("todo")
        #expect(try copy.defaultCollection().document(id: "list1")?.string(forKey: "type") == "task-list")
        #expect(copy.publicUUID != seedUUIDs.0)
        #expect(copy.privateUUID != seedUUIDs.1)
        try copy.close()

        do {
            try Database.copy(fromPath: seedPath, toDatabase: "todo", withConfig: directory.configuration)
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.status == 412)
        }
        #expect(throws: CouchetteError.self) {
            try Database.copy(fromPath: directory.path + "/nothing", toDatabase: "x", withConfig: directory.configuration)
        }
    }

    @Test func newerSchemaIsRefusedAndOlderIsMigrated() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        let file = (db.path! as NSString).appendingPathComponent("db.sqlite3")
        try db.defaultCollection().save(document: MutableDocument(id: "a"))
        try db.close()

        // A version 3 file (without the modification times of version 4) opens read-only as it is: a pre-built
        // database shipped with an app.
        var connection = try Connection(path: file)
        try connection.execute("ALTER TABLE documents DROP COLUMN modified")
        try connection.setUserVersion(3)
        connection.close()
        let readOnly = try directory.open { $0.readOnly = true }
        #expect(try readOnly.defaultCollection().document(id: "a")?.timestamp == nil)
        #expect(try readOnly.createQuery("SELECT META().id AS id FROM _").execute().allResults().count == 1)
        try readOnly.close()

        // An older file: version 1, without the expiration index of version 2 and the view tables of version 3.
        connection = try Connection(path: file)
        #expect(try connection.userVersion == 3)
        try connection.execute("DROP INDEX documents_by_expiration")
        try connection.execute("DROP TABLE view_rows")
        try connection.execute("DROP TABLE views")
        try connection.setUserVersion(1)
        connection.close()
        let migrated = try directory.open()
        let old = try #require(try migrated.defaultCollection().document(id: "a"))
        #expect(old.timestamp == nil, "a row written before schema 4 has no modification time")
        let resaved = old.toMutable().setInt(1, forKey: "n")
        try migrated.defaultCollection().save(document: resaved)
        #expect(try migrated.defaultCollection().document(id: "a")?.timestamp != nil)
        try migrated.close()
        connection = try Connection(path: file)
        #expect(try connection.userVersion == 5)
        #expect(try connection.query("SELECT name FROM sqlite_master WHERE name = 'documents_by_expiration'").count == 1)
        #expect(try connection.query("SELECT name FROM sqlite_master WHERE name IN ('views', 'view_rows')").count == 2)

        try connection.setUserVersion(99)
        connection.close()
        do {
            _ = try directory.open()
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("newer"))
        }
    }

    @Test func aFileThatIsNotADatabaseIsA401() throws {
        let directory = TemporaryDirectory()
        let folder = (directory.path as NSString).appendingPathComponent("junk.couchette")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("db.sqlite3")))
        do {
            _ = try directory.open("junk")
            Issue.record("expected an error")
        } catch let error as CouchetteError {
            #expect(error.status == 401)
        }
    }
}
