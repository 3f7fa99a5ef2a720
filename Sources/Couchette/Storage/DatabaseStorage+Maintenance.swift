import CouchetteSQLite

// MARK: - Maintenance

extension DatabaseStorage {
    /// Rebuilds every index (`REINDEX`).
    func reindex() throws(CouchetteError) {
        try run { try connection.execute("REINDEX") }
    }

    /// Lets SQLite refresh the statistics it needs (`PRAGMA optimize`).
    func optimize() throws(CouchetteError) {
        try run { try connection.execute("PRAGMA optimize") }
    }

    /// Gathers statistics on every index (`ANALYZE`).
    func analyze() throws(CouchetteError) {
        try run { try connection.execute("ANALYZE") }
    }

    /// Rewrites the file without its free pages (`VACUUM`), then folds the write-ahead log into it and empties the
    /// log (`wal_checkpoint(TRUNCATE)`): a vacuum writes every page to the log first, so without the checkpoint the
    /// database's files would grow by a compaction. A reader holding an old snapshot leaves the log as it is.
    func vacuum() throws(CouchetteError) {
        try run {
            try connection.execute("VACUUM")
            _ = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// What `PRAGMA integrity_check` reports: `["ok"]` for a sound file.
    func integrityProblems() throws(CouchetteError) -> [String] {
        try run { try connection.query("PRAGMA integrity_check").compactMap { $0[0].stringValue } }
    }

    /// Writes a copy of the database to `path`, encrypted with `key` (plain when nil).
    func copy(to path: String, key: Connection.EncryptionKey?) throws(CouchetteError) {
        try run { try connection.vacuum(into: path, encryptionKey: key) }
    }

    /// The key of the file's pages (nil for a plain file), from which blob keys are derived.
    func pageKey() throws(CouchetteError) -> [UInt8]? {
        try run { try connection.pageKey() }
    }
}
