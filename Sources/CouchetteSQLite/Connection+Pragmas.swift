// MARK: - Pragmas

extension Connection {
    /// The schema version stored in the database header (`PRAGMA user_version`); 0 in a new
    /// database.
    ///
    /// - Throws: ``SQLiteError`` when the read fails or the connection is closed.
    public var userVersion: Int32 {
        get throws {
            Int32(truncatingIfNeeded: try firstValue("PRAGMA user_version")?.int64Value ?? 0)
        }
    }

    /// Stores the schema version in the database header (`PRAGMA user_version`); call it in the
    /// migration's transaction so that schema and version change together.
    ///
    /// - Parameters:
    ///   - version: The new version.
    /// - Throws: ``SQLiteError`` when the write fails (read-only, busy) or the connection is
    ///   closed.
    public func setUserVersion(_ version: Int32) throws {
        // PRAGMA takes no parameters; an Int32 cannot inject SQL.
        try execute("PRAGMA user_version = \(version)", arguments: [])
    }

    /// The current journal mode (`PRAGMA journal_mode`), such as `wal` or `memory`.
    ///
    /// - Throws: ``SQLiteError`` when the read fails or the connection is closed.
    public var journalMode: String {
        get throws {
            try firstValue("PRAGMA journal_mode")?.stringValue ?? ""
        }
    }
}
