import CouchetteCore
import CouchetteSQLite
import Foundation

// MARK: - All-documents queries

extension DatabaseStorage {
    /// Which rows an all-documents read returns and in what order.
    struct AllDocumentsSelection {
        /// Order by sequence (bounds are sequences) instead of document ID (bounds are IDs).
        var bySequence = false
        var includeDeleted = false
        var onlyConflicts = false
        var lower: (value: any SQLiteBindable, inclusive: Bool)?
        var upper: (value: any SQLiteBindable, inclusive: Bool)?
        var descending = false
        var limit: Int?
        var offset = 0
    }

    /// Documents of a collection (current revisions, no trees) in ID or sequence order.
    func allDocuments(collectionID: Int64, _ selection: AllDocumentsSelection) throws(CouchetteError) -> [DocumentRecord] {
        let column = selection.bySequence ? "sequence" : "doc_id"
        // By sequence: a range of the sequence index, not the (collection, doc_id) index.
        var sql = "SELECT doc_id, \(DatabaseStorage.selectColumns) FROM documents WHERE "
        sql += selection.bySequence ? "+collection = ?" : "collection = ?"
        var arguments: [(any SQLiteBindable)?] = [collectionID]
        if !selection.includeDeleted { sql += " AND (flags & 1) = 0" }
        if selection.onlyConflicts { sql += " AND (flags & 2) != 0" }
        if let lower = selection.lower {
            sql += " AND \(column) \(lower.inclusive ? ">=" : ">") ?"
            arguments.append(lower.value)
        }
        if let upper = selection.upper {
            sql += " AND \(column) \(upper.inclusive ? "<=" : "<") ?"
            arguments.append(upper.value)
        }
        sql += " ORDER BY \(column) \(selection.descending ? "DESC" : "ASC") LIMIT ? OFFSET ?"
        arguments += [Int64(selection.limit ?? -1), Int64(selection.offset)]
        return try run {
            let statement = try connection.cachedStatement(sql: sql)
            try statement.bind(arguments: arguments)
            var records: [DocumentRecord] = []
            try statement.forEachRow { row in
                records.append(
                    DatabaseStorage.record(row, at: 1, collectionID: collectionID, documentID: row.string(at: 0)))
            }
            return records
        }
    }
}
