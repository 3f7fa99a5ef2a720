import CouchetteSQLite
import CouchetteTestSupport
import Foundation
import Testing

@testable import Couchette

/// Schema version 5 (documents keep their row) against a file written by version 4 of this code
/// (Fixtures/schema-v4.sqlite3: 200 tasks, one deleted, a list with two revisions, a value index, a full-text index,
/// a second collection): the upgrade keeps everything, indexes included; an update then rewrites its row in place;
/// a crash during the upgrade leaves a working version 4 file.
@Suite(.timeLimit(.minutes(5))) struct SchemaMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema-v4.sqlite3").path

    /// A folder holding the fixture as the database `old`.
    static func folderWithVersion4() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        let folder = directory.path + "/old.couchette"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture, toPath: folder + "/db.sqlite3")
        return directory
    }

    static func file(_ directory: TemporaryDirectory) -> String { directory.path + "/old.couchette/db.sqlite3" }

    /// The file's schema version and each document's (rowid, sequence), read with plain SQLite.
    static func rows(_ directory: TemporaryDirectory) throws -> (version: Int32, rows: [String: (id: Int64, sequence: Int64)]) {
        let connection = try Connection(path: file(directory), options: .init(create: false))
        defer { connection.close() }
        let version = try connection.userVersion
        var rows: [String: (Int64, Int64)] = [:]
        for row in try connection.query("SELECT doc_id, rowid, sequence FROM documents") {
            rows[row[0].stringValue!] = (row[1].int64Value!, row[2].int64Value!)
        }
        return (version, rows)
    }

    /// What the fixture holds, checked through the public API.
    static func expectFixtureContent(_ db: Database) throws {
        let tasks = try db.defaultCollection()
        #expect(tasks.count == 200)  // 200 tasks + the list − the deleted task
        #expect(try tasks.document(id: "task007") == nil)
        #expect(try tasks.document(id: "task008")?.string(forKey: "task") == "Task number 8")
        let list = try #require(try tasks.document(id: "user1.list"))
        #expect(list.string(forKey: "name") == "Shopping" && list.revisionID == "2-be59ae625f857a6dc4a565a05ab64b6d")
        #expect(try db.collection(name: "lists", scope: "todo")?.document(id: "l1")?.string(forKey: "name") == "Other collection")
        let changes = try tasks.changes(since: 0)
        #expect(changes.count == 201)
        #expect(changes.map(\.sequence) == changes.map(\.sequence).sorted())
        #expect(try tasks.indexes() == ["byTask", "taskText"])
    }

    @Test func aVersion4FileUpgradesKeepingDocumentsIndexesAndOrder() throws {
        let directory = try Self.folderWithVersion4()
        let before = try Self.rows(directory)
        #expect(before.version == 4)
        #expect(before.rows.values.allSatisfy { $0.id == $0.sequence })

        let db = try directory.open("old")
        try Self.expectFixtureContent(db)
        // The value index is used, and the full-text index answers and follows changes.
        let byTask = try db.createQuery("SELECT meta().id FROM _ WHERE task = 'Task number 42'")
        #expect(try byTask.explain().contains("USING INDEX"))
        #expect(try byTask.execute().allResults().map { $0.string(forKey: "id") } == ["task042"])
        let tasks = try db.defaultCollection()
        let document = try #require(try tasks.document(id: "task042")?.toMutable())
        try tasks.save(document: document.setString("Buy zucchini", forKey: "task"))
        let search = try db.createQuery("SELECT meta().id FROM _ WHERE MATCH(taskText, 'zucchini')")
        #expect(try search.execute().allResults().map { $0.string(forKey: "id") } == ["task042"])
        try db.close()

        // Version 5, every row where it was; the update took a new sequence but kept its row.
        let after = try Self.rows(directory)
        #expect(after.version == 5)
        #expect(after.rows.count == before.rows.count)
        for (id, row) in before.rows where id != "task042" { #expect(after.rows[id]! == row, "\(id)") }
        let updated = try #require(after.rows["task042"])
        #expect(updated.id == before.rows["task042"]!.id)
        #expect(updated.sequence > before.rows.values.map(\.sequence).max()!)

        let reopened = try directory.open("old")
        defer { try? reopened.close() }
        #expect(try reopened.defaultCollection().changes(since: 0).last?.documentID == "task042")
        try reopened.performMaintenance(type: .integrityCheck)
    }

    @Test func aVersion4FileOpensReadOnlyWithoutUpgrading() throws {
        let directory = try Self.folderWithVersion4()
        let db = try directory.open("old") { $0.readOnly = true }
        try Self.expectFixtureContent(db)
        try db.close()
        #expect(try Self.rows(directory).version == 4)
    }

    /// An upgrade ended (as by `kill -9`: no commit, no close) after copying the rows or after the last step, before
    /// its commit: the file is still a working version 4 one, and the next open upgrades it with everything.
    @Test(arguments: ["copied", "migrated"])
    func anUpgradeEndedMidwayLeavesVersion4(step: String) async throws {
        try await offCooperativeThreads {
            let directory = try Self.folderWithVersion4()
            let child = try ChildProcess(
                try ChildProcess.builtProduct("couchette"),
                ["stress-migrate", "--directory", directory.path, "--name", "old", "--exit-at", step])
            #expect(try child.waitForExit(within: .seconds(60)) == 0)
            #expect(!child.output.contains("migrated without reaching"), "\(child.output)")
            #expect(try Self.rows(directory).version == 4)
            let db = try directory.open("old")
            defer { try? db.close() }
            try Self.expectFixtureContent(db)
            #expect(try Self.rows(directory).version == 5)
        }
    }
}
