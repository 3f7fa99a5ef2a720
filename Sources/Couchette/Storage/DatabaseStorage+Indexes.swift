import CouchetteSQLite

// MARK: - Indexes

/// A collection's value indexes are SQLite indexes on `documents` named `ix_<collection>_<name>`, led by the
/// collection; its full-text indexes are FTS5 tables `fts_<collection>_<name>` keyed by the documents' sequences and
/// kept in step by triggers on `documents`. Expressions arrive as SQL from the query compiler.
extension DatabaseStorage {
    /// Creates a value index over `columns` (SQL expressions over `body`) of the live documents of a collection that
    /// also pass `condition`; an identical index is kept, one of that name with another definition replaced.
    func createValueIndex(
        named name: String, collectionID: Int64, columns: [String], condition: String?
    ) throws(CouchetteError) {
        var whereClause = "(flags & 1) = 0"
        if let condition { whereClause += " AND (\(condition))" }
        let sqlName = Self.valueIndexPrefix(collectionID) + name
        let sql = "CREATE INDEX \(Self.quoted(sqlName)) ON documents (collection, \(columns.joined(separator: ", "))) WHERE \(whereClause)"
        try run {
            let existing = try connection.firstValue(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", sqlName)?.stringValue
            if existing == sql { return }
            try dropIndexes(named: name, collectionID: collectionID)
            try connection.execute(sql)
        }
    }

    /// Creates a full-text index (FTS5 with `tokenizer`) over the expressions `values` gives for a row alias
    /// (`documents`, or a trigger's `NEW`), for the rows `condition` accepts; fills it now.
    func createFullTextIndex(
        named name: String, collectionID: Int64, tokenizer: String, values: (String) throws -> [String],
        condition: (String) throws -> String?
    ) throws(CouchetteError) {
        let prefix = Self.fullTextPrefix(collectionID)
        let table = Self.quoted(prefix + name)
        try run {
            let newValues = try values("NEW")
            let columns = newValues.indices.map { "c\($0)" }
            func rowCondition(_ row: String) throws -> String {
                var text = "\(row).collection = \(collectionID) AND (\(row).flags & 1) = 0"
                if let extra = try condition(row) { text += " AND (\(extra))" }
                return text
            }
            let create = "CREATE VIRTUAL TABLE \(table) USING fts5(\(columns.joined(separator: ", ")), tokenize = '\(tokenizer)')"
            let insertColumns = "rowid, " + columns.joined(separator: ", ")
            let addNew = "INSERT INTO \(table) (\(insertColumns)) SELECT NEW.sequence, \(newValues.joined(separator: ", ")) WHERE \(try rowCondition("NEW"));"
            let removeOld = "DELETE FROM \(table) WHERE rowid = OLD.sequence;"
            let triggers = [
                "CREATE TRIGGER \(Self.quoted(prefix + name + "_insert")) AFTER INSERT ON documents BEGIN \(addNew) END",
                "CREATE TRIGGER \(Self.quoted(prefix + name + "_delete")) AFTER DELETE ON documents BEGIN \(removeOld) END",
                "CREATE TRIGGER \(Self.quoted(prefix + name + "_update")) AFTER UPDATE ON documents BEGIN \(removeOld) \(addNew) END",
            ]
            let existing = try connection.query(
                "SELECT sql FROM sqlite_master WHERE name IN (?, ?) ORDER BY name", prefix + name, prefix + name + "_insert"
            ).compactMap { $0[0].stringValue }
            if existing == [create, triggers[0]] { return }
            try dropIndexes(named: name, collectionID: collectionID)
            try connection.execute(create)
            try connection.execute(
                "INSERT INTO \(table) (\(insertColumns)) SELECT sequence, \(try values("documents").joined(separator: ", ")) FROM documents WHERE \(try rowCondition("documents"))")
            for trigger in triggers { try connection.execute(trigger) }
        }
    }

    /// Deletes the value or full-text index `name` of a collection; nothing happens when there is none.
    func dropIndexes(named name: String, collectionID: Int64) throws(CouchetteError) {
        let prefix = Self.fullTextPrefix(collectionID)
        try run {
            try connection.execute("DROP INDEX IF EXISTS \(Self.quoted(Self.valueIndexPrefix(collectionID) + name))")
            for suffix in ["_insert", "_delete", "_update"] {
                try connection.execute("DROP TRIGGER IF EXISTS \(Self.quoted(prefix + name + suffix))")
            }
            try connection.execute("DROP TABLE IF EXISTS \(Self.quoted(prefix + name))")
        }
    }

    /// The names of a collection's indexes (value and full-text), sorted.
    func indexNames(collectionID: Int64) throws(CouchetteError) -> [String] {
        let valuePrefix = Self.valueIndexPrefix(collectionID)
        let fullTextPrefix = Self.fullTextPrefix(collectionID)
        return try run {
            let value = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND substr(name, 1, ?) = ?", valuePrefix.count, valuePrefix
            ).compactMap { $0[0].stringValue.map { String($0.dropFirst(valuePrefix.count)) } }
            let fullText = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'",
                fullTextPrefix.count, fullTextPrefix
            ).compactMap { $0[0].stringValue.map { String($0.dropFirst(fullTextPrefix.count)) } }
            return (value + fullText).sorted()
        }
    }

    /// The `CREATE INDEX` statements of a collection's value indexes.
    func valueIndexDefinitions(collectionID: Int64) throws(CouchetteError) -> [String] {
        let prefix = Self.valueIndexPrefix(collectionID)
        return try run {
            try connection.query(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND substr(name, 1, ?) = ?", prefix.count, prefix
            ).compactMap { $0[0].stringValue }
        }
    }

    /// The quoted SQL name of a collection's full-text table for index `name`, when there is one.
    func fullTextTable(named name: String, collectionID: Int64) throws(CouchetteError) -> String? {
        let table = Self.fullTextPrefix(collectionID) + name
        // Read as a string: an absent row must stay nil (`SQLiteValue` would take a nil literal as `.null`).
        let found: String? = try run {
            try connection.firstValue(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'", table
            )?.stringValue
        }
        return found.map { _ in Self.quoted(table) }
    }

    private static func valueIndexPrefix(_ collectionID: Int64) -> String { "ix_\(collectionID)_" }

    private static func fullTextPrefix(_ collectionID: Int64) -> String { "fts_\(collectionID)_" }

    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
