import CouchetteSQLite
import Foundation

// MARK: - Indexes

extension Collection {
    /// Creates an index named `name` (unique in the collection). Nothing happens when an identical index exists; an
    /// index of that name with another definition is replaced.
    ///
    /// - Throws: `.badInput` for an empty expression list or a syntax error in an expression; `.notOpen` once closed.
    public func createIndex(withName name: String, config: any IndexConfiguration) throws {
        guard let config = config as? ValueIndexConfiguration else {
            throw CouchetteError(.unsupported, message: "Unsupported index configuration \(type(of: config))")
        }
        guard !config.expressions.isEmpty, !name.isEmpty else {
            throw CouchetteError(.badInput, message: "An index needs a name and at least one expression")
        }
        let columns = try config.expressions.map {
            try QueryCompiler.indexExpression(QueryParser.parseExpression($0), database: database, collection: self)
        }
        // The collection leads the index, so a query's collection term and its conditions use the index together.
        var condition = "(flags & 1) = 0"
        if let whereClause = config.whereClause {
            let compiled = try QueryCompiler.indexExpression(
                QueryParser.parseExpression(whereClause), database: database, collection: self)
            condition += " AND (\(compiled))"
        }
        let sqlName = indexSQLName(name)
        let sql = "CREATE INDEX \(sqlName) ON documents (collection, \(columns.joined(separator: ", "))) WHERE \(condition)"
        try database.write { storage in
            let existing = try storage.connection.firstValue(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", indexPrefix + name)?.stringValue
            if existing == sql { return }
            if existing != nil { try storage.connection.execute("DROP INDEX \(sqlName)") }
            try storage.connection.execute(sql)
        }
    }

    /// Deletes the index named `name`; nothing happens when there is none.
    public func deleteIndex(forName name: String) throws {
        try database.write { storage in try storage.connection.execute("DROP INDEX IF EXISTS \(indexSQLName(name))") }
    }

    /// The names of the collection's indexes, sorted.
    public func indexes() throws -> [String] {
        try read { storage in
            try storage.connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND substr(name, 1, ?) = ? ORDER BY name",
                indexPrefix.count, indexPrefix
            ).compactMap { $0[0].stringValue.map { String($0.dropFirst(indexPrefix.count)) } }
        }
    }

    /// SQLite names of a collection's indexes start with this.
    private var indexPrefix: String { "ix_\(id)_" }

    private func indexSQLName(_ name: String) -> String {
        "\"" + (indexPrefix + name).replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
