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
        try read { storage in try storage.valueIndexDefinitions(collectionID: id) }
    }

    private func createValueIndex(_ name: String, _ config: ValueIndexConfiguration) throws {
        // The collection leads the index, so a query's collection term and its conditions use the index together.
        let columns = try config.expressions.map { try compiled($0, table: nil) }
        let condition = try config.whereClause.map { try compiled($0, table: nil) }
        try database.write { storage in
            try storage.createValueIndex(named: name, collectionID: id, columns: columns, condition: condition)
        }
    }

    /// A full-text table keyed by the documents' sequences, filled now and kept in step with the documents by
    /// triggers (in the same transactions).
    private func createFullTextIndex(_ name: String, _ config: FullTextIndexConfiguration) throws {
        try database.write { storage in
            try storage.createFullTextIndex(
                named: name, collectionID: id, tokenizer: config.tokenizer,
                values: { row in try config.expressions.map { try compiled($0, table: row) } },
                condition: { row in try config.whereClause.map { try compiled($0, table: row) } })
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
        try database.write { storage in try storage.dropIndexes(named: name, collectionID: id) }
    }

    /// The names of the collection's indexes (value and full-text), sorted.
    public func indexes() throws -> [String] {
        try read { storage in try storage.indexNames(collectionID: id) }
    }

    /// The SQL name of this collection's full-text table for index `name`, when there is one.
    func fullTextTable(named name: String) throws -> String? {
        try read { storage in try storage.fullTextTable(named: name, collectionID: id) }
    }
}
