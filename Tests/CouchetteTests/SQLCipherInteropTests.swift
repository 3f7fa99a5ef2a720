import Couchette
import CouchetteSQLite
import CouchetteTestSupport
import Foundation
import Testing

// MARK: - SQLCipherInteropTests

/// Our encrypted files against a real SQLCipher 4: a database we write opens there with the same password (or raw
/// key) and shows our rows; databases SQLCipher writes, in WAL and rollback modes, open here.
@Suite(
    .enabled(
        if: PythonOracle.isRequired || PythonOracle.sqlcipher.shared != nil,
        "needs python3-venv and PyPI for sqlcipher3-binary (required when CI=true)"),
    .timeLimit(.minutes(5)))
struct SQLCipherInteropTests {
    /// The oracle; in CI a missing one fails every test here instead of skipping them.
    static var oracle: PythonOracle {
        get throws { try #require(PythonOracle.sqlcipher.shared, "CI=true: the SQLCipher oracle must be installed") }
    }
    static let rawKeyHex = "2dd29ca851e7b56e4697b0e1f08507293d761a05ce4d1b628663f411a8086d99"

    static var rawKey: Data {
        Data(stride(from: 0, to: rawKeyHex.count, by: 2).map { offset in
            let start = rawKeyHex.index(rawKeyHex.startIndex, offsetBy: offset)
            return UInt8(rawKeyHex[start..<rawKeyHex.index(start, offsetBy: 2)], radix: 16)!
        })
    }

    /// Reads a database with SQLCipher: `PRAGMA key = argv[2]`, then prints the count of `documents`, the title of
    /// `doc7` and the result of `cipher_integrity_check`.
    static let readOurs = """
        import sys, sqlcipher3
        db = sqlcipher3.connect(sys.argv[1])
        db.execute("PRAGMA key = " + sys.argv[2])
        count = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        body = db.execute("SELECT body FROM documents WHERE doc_id = 'doc7'").fetchone()[0]
        problems = db.execute("PRAGMA cipher_integrity_check").fetchall()
        print(count, bytes(body).decode(), len(problems))
        """

    @Test(arguments: [
        (EncryptionKey.password("pässword 1"), "'pässword 1'"),
        (EncryptionKey.key(SQLCipherInteropTests.rawKey), "\"x'\(SQLCipherInteropTests.rawKeyHex)'\""),
    ])
    func sqlcipherReadsOurDatabase(key: EncryptionKey, pragma: String) throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("ours") { $0.encryptionKey = key }
        try EncryptionTests.fill(db, count: 200)
        try db.close()
        let path = (directory.path as NSString).appendingPathComponent("ours.couchette/db.sqlite3")
        let output = try Self.oracle.run(Self.readOurs, [path, pragma]).split(separator: " ", maxSplits: 1)
        #expect(output.first == "200")
        #expect(output.last?.contains("\(EncryptionTests.marker) 7") == true)
        #expect(output.last?.hasSuffix(" 0\n") == true, "cipher_integrity_check found problems: \(output)")
    }

    /// What a crash leaves of our database (the file and its WAL, copied while it is open, after commits of hundreds of
    /// frames gathered and encrypted together): SQLCipher's own recovery accepts our frame checksums and reads every row.
    @Test func sqlcipherRecoversOurWAL() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("ours") { $0.encryptionKey = .password("pässword 1") }
        defer { try? db.close() }
        try EncryptionTests.fill(db, count: 3_000)
        let collection = try db.defaultCollection()
        try db.inBatch {
            for index in stride(from: 0, to: 3_000, by: 2) {
                let document = try #require(try collection.document(id: "doc\(index)")).toMutable()
                try collection.save(document: document.setString("\(EncryptionTests.marker) \(index) again", forKey: "title"))
            }
        }
        let source = (directory.path as NSString).appendingPathComponent("ours.couchette/db.sqlite3")
        let copy = (directory.path as NSString).appendingPathComponent("copy.sqlite3")
        let wal = try #require(FileManager.default.attributesOfItem(atPath: source + "-wal")[.size] as? Int)
        #expect(wal > 200 * 4_120, "the rows should still be in the WAL")
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        try FileManager.default.copyItem(atPath: source + "-wal", toPath: copy + "-wal")
        let output = try Self.oracle.run(Self.readOurs, [copy, "'pässword 1'"]).split(separator: " ", maxSplits: 1)
        #expect(output.first == "3000")
        #expect(output.last?.contains("\(EncryptionTests.marker) 7") == true)
        #expect(output.last?.hasSuffix(" 0\n") == true, "cipher_integrity_check found problems: \(output)")
    }

    /// Writes a database with SQLCipher in `argv[3]` journal mode, leaving its WAL in place when `argv[4]` is
    /// "keep" (another connection holds it open while the first closes).
    static let writeTheirs = """
        import sys, sqlcipher3
        db = sqlcipher3.connect(sys.argv[1])
        db.execute("PRAGMA key = " + sys.argv[2])
        db.execute("PRAGMA journal_mode = " + sys.argv[3])
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.executemany("INSERT INTO notes (text) VALUES (?)", [("note %d" % i,) for i in range(500)])
        db.commit()
        if sys.argv[4] == "keep":
            import os
            os._exit(0)   # no checkpoint: the rows stay in the WAL
        db.close()
        """

    @Test(arguments: ["wal", "delete"], ["close", "keep"])
    func weReadSQLCipherDatabases(journalMode: String, ending: String) throws {
        let directory = TemporaryDirectory()
        let path = (directory.path as NSString).appendingPathComponent("theirs.sqlite3")
        for (key, pragma): (Connection.EncryptionKey, String) in [
            (.passphrase(Array("their secret".utf8)), "'their secret'"),
            (.raw(Array(Self.rawKey)), "\"x'\(Self.rawKeyHex)'\""),
        ] {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-wal")
            _ = try Self.oracle.run(Self.writeTheirs, [path, pragma, journalMode, ending])
            let connection = try Connection(path: path, options: .init(encryptionKey: key))
            defer { connection.close() }
            #expect(try connection.firstValue("SELECT count(*) FROM notes")?.int64Value == 500)
            #expect(try connection.firstValue("SELECT text FROM notes WHERE id = 42")?.stringValue == "note 41")
        }
    }
}
