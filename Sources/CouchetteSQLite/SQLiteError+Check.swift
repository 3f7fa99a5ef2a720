import CSQLite

// MARK: - The choke point

extension SQLiteError {
    /// Turns an SQLite result code into a thrown ``SQLiteError``: every `sqlite3_*` result code in
    /// this module goes through here.
    ///
    /// `SQLITE_OK`, `SQLITE_ROW` and `SQLITE_DONE` are successes and are returned unchanged so
    /// that callers of `sqlite3_step` can tell them apart.
    ///
    /// - Parameters:
    ///   - code: The result code of an `sqlite3_*` call.
    ///   - database: The connection the call ran on, to read `sqlite3_errmsg`; `nil` when there
    ///     is none (SQLite's generic text for the code is used).
    ///   - sql: The SQL being run, if any.
    /// - Returns: `code`, when it is a success.
    /// - Throws: ``SQLiteError`` when `code` is an error.
    @inline(__always)
    @discardableResult
    static func check(_ code: Int32, database: OpaquePointer?, sql: String? = nil) throws -> Int32 {
        switch code {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
            return code
        default:
            throw make(code: code, database: database, sql: sql)
        }
    }

    /// Builds the error for a failed call, reading SQLite's message only when it describes
    /// `code`.
    private static func make(code: Int32, database: OpaquePointer?, sql: String?) -> SQLiteError {
        let message: String
        if let database, sqlite3_extended_errcode(database) & 0xFF == code & 0xFF,
           let text = sqlite3_errmsg(database)
        {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        return SQLiteError(code: code, message: message, sql: sql)
    }
}
