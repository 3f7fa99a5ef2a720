import CouchetteCore
import CouchetteSQLite
import Foundation

// MARK: - Map/reduce view rows

extension DatabaseStorage {
    /// A view's stored state.
    struct ViewState: Sendable {
        var id: Int64
        var version: String
        var lastSequence: UInt64
    }

    /// One stored row of a view index.
    struct ViewIndexRow: Sendable {
        var documentID: String
        var sequence: UInt64
        /// The key and value as JSON text.
        var key: [UInt8]
        var value: [UInt8]?
    }

    /// One end of a range of rows: the collation bytes of a key, and, among rows with exactly that key, a document ID
    /// to start or stop at.
    struct RowBound {
        var sortKey: [UInt8]
        var documentID: String?
        var inclusive: Bool
    }

    func view(collectionID: Int64, name: String) throws(CouchetteError) -> ViewState? {
        try run {
            let rows = try connection.query(
                "SELECT id, version, last_sequence FROM views WHERE collection = ? AND name = ?", collectionID, name)
            return rows.first.map {
                ViewState(
                    id: $0[0].int64Value ?? 0, version: $0[1].stringValue ?? "",
                    lastSequence: UInt64($0[2].int64Value ?? 0))
            }
        }
    }

    /// The names of a collection's views that have an index.
    func viewNames(collectionID: Int64) throws(CouchetteError) -> [String] {
        try run {
            try connection.query("SELECT name FROM views WHERE collection = ? ORDER BY name", collectionID)
                .compactMap { $0[0].stringValue }
        }
    }

    /// Creates the view's row, or empties its index when its version changed.
    func prepareView(collectionID: Int64, name: String, version: String) throws(CouchetteError) -> ViewState {
        if let existing = try view(collectionID: collectionID, name: name) {
            guard existing.version != version else { return existing }
            try run {
                try connection.execute("DELETE FROM view_rows WHERE view = ?", existing.id)
                try connection.execute("UPDATE views SET version = ?, last_sequence = 0 WHERE id = ?", version, existing.id)
            }
            return ViewState(id: existing.id, version: version, lastSequence: 0)
        }
        return try run {
            try connection.execute(
                "INSERT INTO views (collection, name, version) VALUES (?, ?, ?)", collectionID, name, version)
            return ViewState(id: try connection.lastInsertRowID, version: version, lastSequence: 0)
        }
    }

    /// Deletes every row of a view and, with `forget`, the view itself.
    func clearView(id: Int64, forget: Bool) throws(CouchetteError) {
        try run {
            try connection.execute("DELETE FROM view_rows WHERE view = ?", id)
            if forget {
                try connection.execute("DELETE FROM views WHERE id = ?", id)
            } else {
                try connection.execute("UPDATE views SET last_sequence = 0 WHERE id = ?", id)
            }
        }
    }

    func setViewLastSequence(_ sequence: UInt64, viewID: Int64) throws(CouchetteError) {
        try run { try connection.execute("UPDATE views SET last_sequence = ? WHERE id = ?", Int64(sequence), viewID) }
    }

    func removeViewRows(viewID: Int64, documentID: String) throws(CouchetteError) {
        try run {
            let statement = try connection.cachedStatement(sql: "DELETE FROM view_rows WHERE view = ? AND doc_id = ?")
            try statement.bind(viewID, at: 1)
            try statement.bind(documentID, at: 2)
            try statement.execute()
        }
    }

    func insertViewRow(
        viewID: Int64, sortKey: [UInt8], documentID: String, sequence: UInt64, key: [UInt8], value: [UInt8]?
    ) throws(CouchetteError) {
        try run {
            let statement = try connection.cachedStatement(
                sql: "INSERT INTO view_rows (view, sort_key, doc_id, sequence, key, value) VALUES (?, ?, ?, ?, ?, ?)")
            try statement.bind(viewID, at: 1)
            try statement.bind(sortKey, at: 2)
            try statement.bind(documentID, at: 3)
            try statement.bind(Int64(sequence), at: 4)
            try statement.bind(key, at: 5)
            if let value { try statement.bind(value, at: 6) } else { try statement.bindNull(at: 6) }
            try statement.execute()
        }
    }

    func viewRowCount(viewID: Int64) throws(CouchetteError) -> Int {
        try run { Int(try connection.firstValue("SELECT count(*) FROM view_rows WHERE view = ?", viewID)?.int64Value ?? 0) }
    }

    /// A view's rows between two bounds, in key order (then document ID), reversed when `descending`.
    func viewRows(
        viewID: Int64, lower: RowBound?, upper: RowBound?, descending: Bool, limit: Int?, offset: Int
    ) throws(CouchetteError) -> [ViewIndexRow] {
        var sql = "SELECT doc_id, sequence, key, value FROM view_rows WHERE view = ?"
        var arguments: [(any SQLiteBindable)?] = [viewID]
        for (bound, isLower) in [(lower, true), (upper, false)] {
            guard let bound else { continue }
            let strict = isLower ? ">" : "<"
            let loose = bound.inclusive ? strict + "=" : strict
            if let documentID = bound.documentID {
                sql += " AND (sort_key \(strict) ? OR (sort_key = ? AND doc_id \(loose) ?))"
                arguments += [bound.sortKey, bound.sortKey, documentID]
            } else {
                sql += " AND sort_key \(loose) ?"
                arguments.append(bound.sortKey)
            }
        }
        let direction = descending ? "DESC" : "ASC"
        sql += " ORDER BY sort_key \(direction), doc_id \(direction) LIMIT ? OFFSET ?"
        arguments += [Int64(limit ?? -1), Int64(offset)]
        return try run {
            let statement = try connection.cachedStatement(sql: sql)
            try statement.bind(arguments: arguments)
            var rows: [ViewIndexRow] = []
            try statement.forEachRow { row in
                rows.append(
                    ViewIndexRow(
                        documentID: row.string(at: 0), sequence: UInt64(row.int64(at: 1)), key: row.blob(at: 2),
                        value: row.isNull(at: 3) ? nil : row.blob(at: 3)))
            }
            return rows
        }
    }
}
