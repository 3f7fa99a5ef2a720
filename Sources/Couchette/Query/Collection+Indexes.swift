import CouchetteSQLite
import Foundation

// MARK: - Indexes

extension Collection {
    /// Creates an index named `name` (unique in the collection). Nothing happens when an identical index exists; an
    /// index of that name with another definition is replaced.
    ///
    /// - Throws: `.badInput` for an empty expression list or a syntax error in an expression; `.notOpen` once closed.
    public func createIndex(withName name: String, config: any IndexConfiguration) throws {
        guard !config.expressions.isEmpty, !name.isEmpty else {
            throw CouchetteError(.badInput, message: "An index needs a name and at least one expression")
        }
        switch config {
        case let config as ValueIndexConfiguration: try createValueIndex(name, config)
        case let config as FullTextIndexConfiguration: try createFullTextIndex(name, config)
        default: throw CouchetteError(.unsupported, message: "Unsupported index configuration \(type(of: config))")
        }
    }

    /// Creates an index made by ``IndexBuilder``; the same as ``createIndex(withName:config:)`` with its
    /// configuration.
    public func createIndex(_ index: any Index, name: String) throws {
        try createIndex(withName: name, config: index.configuration)
    }

    /// The `CREATE INDEX` statements of the collection's value indexes.
    func valueIndexDefinitions() throws -> [String] {
        try read { storage in
            try storage.connection.query(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND substr(name, 1, ?) = ?", indexPrefix.count,
                indexPrefix
            ).compactMap { $0[0].stringValue }
        }
    }

    private func createValueIndex(_ name: String, _ config: ValueIndexConfiguration) throws {
        let columns = try config.expressions.map { try compiled($0, table: nil) }
        // The collection leads the index, so a query's collection term and its conditions use the index together.
        var condition = "(flags & 1) = 0"
        if let whereClause = config.whereClause { condition += " AND (\(try compiled(whereClause, table: nil)))" }
        let sqlName = quoted(indexPrefix + name)
        let sql = "CREATE INDEX \(sqlName) ON documents (collection, \(columns.joined(separator: ", "))) WHERE \(condition)"
        try database.write { storage in
            let existing = try storage.connection.firstValue(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", indexPrefix + name)?.stringValue
            if existing == sql { return }
            try dropIndexes(named: name, storage: storage)
            try storage.connection.execute(sql)
        }
    }

    /// An FTS5 table `fts_<collection>_<name>` keyed by the documents' sequences, filled now and kept in step by
    /// triggers on `documents` (in the same transactions as the documents).
    private func createFullTextIndex(_ name: String, _ config: FullTextIndexConfiguration) throws {
        let table = quoted(fullTextPrefix + name)
        let columns = config.expressions.indices.map { "c\($0)" }
        func values(_ row: String) throws -> [String] { try config.expressions.map { try compiled($0, table: row) } }
        func condition(_ row: String) throws -> String {
            var condition = "\(row).collection = \(id) AND (\(row).flags & 1) = 0"
            if let whereClause = config.whereClause { condition += " AND (\(try compiled(whereClause, table: row)))" }
            return condition
        }
        let create = "CREATE VIRTUAL TABLE \(table) USING fts5(\(columns.joined(separator: ", ")), tokenize = '\(config.tokenizer)')"
        let insertColumns = "rowid, " + columns.joined(separator: ", ")
        let addNew = "INSERT INTO \(table) (\(insertColumns)) SELECT NEW.sequence, \(try values("NEW").joined(separator: ", ")) WHERE \(try condition("NEW"));"
        let removeOld = "DELETE FROM \(table) WHERE rowid = OLD.sequence;"
        let triggers = [
            "CREATE TRIGGER \(quoted(fullTextPrefix + name + "_insert")) AFTER INSERT ON documents BEGIN \(addNew) END",
            "CREATE TRIGGER \(quoted(fullTextPrefix + name + "_delete")) AFTER DELETE ON documents BEGIN \(removeOld) END",
            "CREATE TRIGGER \(quoted(fullTextPrefix + name + "_update")) AFTER UPDATE ON documents BEGIN \(removeOld) \(addNew) END",
        ]
        try database.write { storage in
            let existing = try storage.connection.query(
                "SELECT sql FROM sqlite_master WHERE name IN (?, ?) ORDER BY name", fullTextPrefix + name,
                fullTextPrefix + name + "_insert"
            ).compactMap { $0[0].stringValue }
            if existing == [create, triggers[0]] { return }
            try dropIndexes(named: name, storage: storage)
            try storage.connection.execute(create)
            try storage.connection.execute(
                "INSERT INTO \(table) (\(insertColumns)) SELECT sequence, \(try values("documents").joined(separator: ", ")) FROM documents WHERE \(try condition("documents"))")
            for trigger in triggers { try storage.connection.execute(trigger) }
        }
    }

    /// An SQL++ expression as SQL over the `body` of `table` (`documents`, a trigger's `NEW`, or nil for the bare
    /// column of an index definition).
    private func compiled(_ expression: String, table: String?) throws -> String {
        try QueryCompiler.indexExpression(QueryParser.parseExpression(expression), database: database, collection: self)
            .replacingOccurrences(of: "\"documents\".body", with: table.map { "\($0).body" } ?? "body")
    }

    /// Deletes the index named `name`; nothing happens when there is none.
    public func deleteIndex(forName name: String) throws {
        try database.write { storage in try dropIndexes(named: name, storage: storage) }
    }

    /// The names of the collection's indexes (value and full-text), sorted.
    public func indexes() throws -> [String] {
        try read { storage in
            let value = try storage.connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND substr(name, 1, ?) = ?", indexPrefix.count,
                indexPrefix
            ).compactMap { $0[0].stringValue.map { String($0.dropFirst(indexPrefix.count)) } }
            let fullText = try storage.connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'",
                fullTextPrefix.count, fullTextPrefix
            ).compactMap { $0[0].stringValue.map { String($0.dropFirst(fullTextPrefix.count)) } }
            return (value + fullText).sorted()
        }
    }

    /// The SQL name of this collection's full-text table for index `name`, when there is one.
    func fullTextTable(named name: String) throws -> String? {
        let table = fullTextPrefix + name
        // Read as a string: an absent row must stay nil (`SQLiteValue` would take a nil literal as `.null`).
        let found: String? = try read { storage in
            try storage.connection.firstValue(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'", table
            )?.stringValue
        }
        return found.map { _ in quoted(table) }
    }

    private func dropIndexes(named name: String, storage: DatabaseStorage) throws {
        try storage.connection.execute("DROP INDEX IF EXISTS \(quoted(indexPrefix + name))")
        for suffix in ["_insert", "_delete", "_update"] {
            try storage.connection.execute("DROP TRIGGER IF EXISTS \(quoted(fullTextPrefix + name + suffix))")
        }
        try storage.connection.execute("DROP TABLE IF EXISTS \(quoted(fullTextPrefix + name))")
    }

    /// SQLite names of a collection's value indexes start with this.
    private var indexPrefix: String { "ix_\(id)_" }
    /// …and of its full-text tables with this.
    private var fullTextPrefix: String { "fts_\(id)_" }

    private func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
