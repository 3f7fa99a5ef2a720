import Foundation
import Testing

@testable import CouchetteSQLite

/// The rollback journal of an encrypted database (journal mode DELETE): its page images are encrypted, and a hot
/// journal left by a crash rolls the database back to its state before the transaction.
@Suite("Encrypted rollback journal", .timeLimit(.minutes(5)))
struct EncryptedJournalTests {
    static let key = Connection.EncryptionKey.passphrase(Array("journal secret".utf8))
    static let marker = "JOURNAL-PLAINTEXT-MARKER-93f1"

    @Test("Mid-transaction, neither the journal nor the database holds plaintext, and a hot journal rolls back")
    func journalIsEncryptedAndRecovers() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("journal.sqlite")
            let connection = try Connection(path: path, options: .init(journalMode: .delete, encryptionKey: Self.key))
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, updated INTEGER DEFAULT 0)")
            try connection.execute("BEGIN")
            for row in 0..<400 {
                try connection.execute("INSERT INTO t (text) VALUES (?)", "\(Self.marker) \(row) " + String(repeating: "j", count: 300))
            }
            try connection.execute("COMMIT")

            // A tiny cache makes the update spill changed pages to the file, with their originals in the journal.
            try connection.execute("PRAGMA cache_size = 5")
            try connection.execute("BEGIN")
            try connection.execute("UPDATE t SET text = text || ' changed', updated = 1")
            let journal = try Data(contentsOf: URL(fileURLWithPath: path + "-journal"))
            let database = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(journal.count > 20 * 4096)
            for bytes in [journal, database] {
                #expect(bytes.range(of: Data(Self.marker.utf8)) == nil)
                #expect(bytes.range(of: Data("SQLite format 3".utf8)) == nil)
            }
            // The state a crash leaves: the database with pages of the unfinished transaction, and its hot journal.
            let copy = directory.path("copy.sqlite")
            try database.write(to: URL(fileURLWithPath: copy))
            try journal.write(to: URL(fileURLWithPath: copy + "-journal"))
            try connection.execute("ROLLBACK")

            let recovered = try Connection(path: copy, options: .init(journalMode: .delete, encryptionKey: Self.key))
            defer { recovered.close() }
            #expect(try recovered.firstValue("SELECT count(*) FROM t WHERE updated = 1") == .integer(0))
            #expect(try recovered.firstValue("SELECT count(*) FROM t") == .integer(400))
            #expect(try recovered.firstValue("PRAGMA integrity_check") == .text("ok"))
            #expect(!FileManager.default.fileExists(atPath: copy + "-journal"))
        }
    }

    @Test("Temporary data stays in memory: temp_store cannot be switched to files")
    func temporaryFilesAreRefused() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path("temp.sqlite"), options: .init(encryptionKey: Self.key))
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (text TEXT)")
            try connection.execute("INSERT INTO t VALUES (?)", Self.marker)
            #expect(try connection.firstValue("PRAGMA temp_store") == .integer(2))  // MEMORY
            try connection.execute("CREATE TEMP TABLE kept_in_memory AS SELECT * FROM t")
            for value in ["FILE", "DEFAULT", "1", "0"] {
                #expect(throws: SQLiteError.self, "temp_store = \(value)") {
                    try connection.execute("PRAGMA temp_store = \(value)")
                }
            }
            #expect(try connection.firstValue("PRAGMA temp_store") == .integer(2))
            #expect(try connection.firstValue("SELECT count(*) FROM temp.kept_in_memory") == .integer(1))
        }
    }
}
