import Foundation
import Testing

@testable import CouchetteSQLite

@Suite("Connection", .timeLimit(.minutes(5)))
struct ConnectionTests {
    // MARK: - Opening

    @Test("A new file is created in WAL mode")
    func createsFileInWALMode() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            let connection = try Connection(path: path)
            defer { connection.close() }

            #expect(FileManager.default.fileExists(atPath: path))
            #expect(try connection.journalMode == "wal")
            #expect(try connection.firstValue("PRAGMA journal_mode") == .text("wal"))
            #expect(try connection.isInTransaction == false)
        }
    }

    @Test("Other journal modes can be chosen")
    func journalModeOption() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path(), options: .init(journalMode: .delete))
            defer { connection.close() }
            #expect(try connection.journalMode == "delete")
        }
    }

    @Test("In-memory databases and file: URIs open")
    func memoryAndURI() throws {
        let memory = try Connection(path: ":memory:")
        try memory.execute("CREATE TABLE t (a)")
        try memory.execute("INSERT INTO t VALUES (?)", 1)
        #expect(try memory.firstValue("SELECT count(*) FROM t") == .integer(1))
        #expect(try memory.journalMode == "memory")
        memory.close()

        try withTemporaryDirectory { directory in
            let uri = "file:\(directory.path("uri.sqlite"))?mode=rwc"
            let connection = try Connection(path: uri)
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (a)")
            #expect(FileManager.default.fileExists(atPath: directory.path("uri.sqlite")))
        }
    }

    @Test("Foreign keys are enforced: a violation is a constraint error with status 409")
    func foreignKeysEnforced() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("""
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES parent(id));
                """)
            #expect(try connection.firstValue("PRAGMA foreign_keys") == .integer(1))
            try connection.execute("INSERT INTO parent (id) VALUES (?)", 1)
            try connection.execute("INSERT INTO child (parent) VALUES (?)", 1)

            let error = try #require(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO child (parent) VALUES (?)", 2)
            }
            #expect(error.primaryCode == .constraint)
            #expect(error.resultCode == .constraintForeignKey)
            #expect(error.status == 409)
            #expect(try connection.firstValue("SELECT count(*) FROM child") == .integer(1))
        }
    }

    @Test("Opening a file that is not a database fails with SQLITE_NOTADB, status 401")
    func notADatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("garbage.sqlite")
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let error = try #require(throws: SQLiteError.self) {
                _ = try Connection(path: path)
            }
            #expect(error.primaryCode == .notADatabase)
            #expect(error.status == 401)
        }
    }

    @Test("A missing file opened without create fails with SQLITE_CANTOPEN, status 404")
    func missingFile() throws {
        try withTemporaryDirectory { directory in
            let error = try #require(throws: SQLiteError.self) {
                _ = try Connection(path: directory.path("missing.sqlite"), options: .init(create: false))
            }
            #expect(error.primaryCode == .cantOpen)
            #expect(error.status == 404)
        }
    }

    @Test("Writing through a read-only connection fails with SQLITE_READONLY, status 403")
    func readOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            let writer = try Connection(path: path)
            defer { writer.close() }
            try writer.execute("CREATE TABLE t (a)")

            let reader = try Connection(path: path, options: .init(readOnly: true))
            defer { reader.close() }
            #expect(try reader.firstValue("SELECT count(*) FROM t") == .integer(0))
            let error = try #require(throws: SQLiteError.self) {
                try reader.execute("INSERT INTO t VALUES (?)", 1)
            }
            #expect(error.primaryCode == .readOnly)
            #expect(error.status == 403)
        }
    }

    // MARK: - Closing

    @Test("close() is idempotent and later use throws a misuse error instead of crashing")
    func closedConnection() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            try connection.execute("CREATE TABLE t (a)")
            let cached = try connection.cachedStatement(sql: "SELECT a FROM t")
            let uncached = try connection.makeStatement(sql: "INSERT INTO t VALUES (?)")

            connection.close()
            connection.close()
            #expect(connection.isClosed)

            let error = try #require(throws: SQLiteError.self) {
                try connection.execute("INSERT INTO t VALUES (1)")
            }
            #expect(error.primaryCode == .misuse)
            #expect(error.message == "connection is closed")
            #expect(error.status == 500)

            #expect(throws: SQLiteError.connectionClosed(sql: "SELECT 1")) {
                try connection.query("SELECT 1")
            }
            #expect(throws: SQLiteError.self) { try connection.makeStatement(sql: "SELECT 1") }
            #expect(throws: SQLiteError.self) { try connection.transaction { _ in } }
            #expect(throws: SQLiteError.self) { try connection.userVersion }
            #expect(throws: SQLiteError.self) { try connection.lastInsertRowID }
            #expect(throws: SQLiteError.self) { try connection.isInTransaction }
            #expect(throws: SQLiteError.self) { try cached.step() }
            #expect(throws: SQLiteError.self) { try uncached.bind(1, at: 1) }
            #expect(throws: SQLiteError.self) { try uncached.step() }
            // Getters on a finalized statement read NULL rather than crash.
            #expect(cached.isNull(at: 0))
        }
    }

    @Test("A connection closes itself when released")
    func deinitCloses() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            var statement: Statement?
            do {
                let connection = try Connection(path: path)
                try connection.execute("CREATE TABLE t (a)")
                statement = try connection.makeStatement(sql: "SELECT a FROM t")
            }
            // The statement outlives its connection and fails cleanly.
            #expect(throws: SQLiteError.connectionClosed(sql: "SELECT a FROM t")) {
                try statement?.step()
            }
            statement = nil
        }
    }

    // MARK: - Pragmas and counters

    @Test("userVersion round trips and persists")
    func userVersion() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            do {
                let connection = try Connection(path: path)
                defer { connection.close() }
                #expect(try connection.userVersion == 0)
                try connection.setUserVersion(42)
                #expect(try connection.userVersion == 42)
                try connection.transaction { db in try db.setUserVersion(Int32.max) }
                #expect(try connection.userVersion == Int32.max)
            }
            let reopened = try Connection(path: path)
            defer { reopened.close() }
            #expect(try reopened.userVersion == Int32.max)
        }
    }

    @Test("lastInsertRowID, changes and totalChanges")
    func counters() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
        try connection.execute("INSERT INTO t (id, a) VALUES (?, ?)", 10, "x")
        #expect(try connection.lastInsertRowID == 10)
        try connection.execute("INSERT INTO t (a) VALUES (?)", "y")
        #expect(try connection.lastInsertRowID == 11)
        try connection.execute("UPDATE t SET a = ?", "z")
        #expect(try connection.changes == 2)
        #expect(try connection.totalChanges == 4)
    }

    @Test("Scripts run several statements; the one-statement API refuses them")
    func scripts() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);")
        #expect(try connection.firstValue("SELECT sum(a) FROM t") == .integer(3))

        let error = try #require(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO t VALUES (?); DELETE FROM t", 3)
        }
        #expect(error.primaryCode == .misuse)
        // Trailing semicolons, whitespace and comments are fine.
        try connection.execute("INSERT INTO t VALUES (?);  -- done\n", 3)
        #expect(try connection.firstValue("SELECT sum(a) FROM t") == .integer(6))
    }
}
