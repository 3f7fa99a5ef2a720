import CSQLite
import Foundation

/// The baseline: what a SQLite user would write for the same work. A rowid table with the document ID as
/// its primary key, WAL with `synchronous=NORMAL` (the same settings Couchette uses), prepared statements
/// reused across calls.
final class RawSQLite {
    private var handle: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?
    private var update: OpaquePointer?

    init(path: String) {
        precondition(sqlite3_open(path, &handle) == SQLITE_OK)
        execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        execute("CREATE TABLE docs (id TEXT PRIMARY KEY, body BLOB NOT NULL)")
        insert = prepare("INSERT INTO docs (id, body) VALUES (?, ?)")
        select = prepare("SELECT body FROM docs WHERE id = ?")
        update = prepare("UPDATE docs SET body = ? WHERE id = ?")
    }

    deinit {
        for statement in [insert, select, update] { sqlite3_finalize(statement) }
        sqlite3_close(handle)
    }

    func execute(_ sql: String) {
        precondition(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
    }

    private func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        precondition(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK)
        return statement
    }

    func insert(id: String, body: [UInt8]) {
        sqlite3_bind_text(insert, 1, id, -1, couchette_sqlite_transient())
        body.withUnsafeBytes { _ = sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), couchette_sqlite_transient()) }
        precondition(sqlite3_step(insert) == SQLITE_DONE)
        sqlite3_reset(insert)
    }

    func update(id: String, body: [UInt8]) {
        body.withUnsafeBytes { _ = sqlite3_bind_blob(update, 1, $0.baseAddress, Int32($0.count), couchette_sqlite_transient()) }
        sqlite3_bind_text(update, 2, id, -1, couchette_sqlite_transient())
        precondition(sqlite3_step(update) == SQLITE_DONE)
        sqlite3_reset(update)
    }

    /// Reads a body into a byte array, as a user of raw SQLite would.
    func read(id: String) -> [UInt8]? {
        sqlite3_bind_text(select, 1, id, -1, couchette_sqlite_transient())
        defer { sqlite3_reset(select) }
        guard sqlite3_step(select) == SQLITE_ROW else { return nil }
        let count = Int(sqlite3_column_bytes(select, 0))
        guard let bytes = sqlite3_column_blob(select, 0) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
