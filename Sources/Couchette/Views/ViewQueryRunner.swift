import CouchetteCore
import CouchetteSQLite
import Foundation

/// Runs a ``ViewQuery``: reads a view's index (updating it first when asked) or the collection's documents, then
/// groups, reduces, filters and pages the rows.
struct ViewQueryRunner {
    let query: ViewQuery

    func run() throws -> QueryEnumerator {
        switch query.source {
        case .view(let view): try runView(view)
        case .allDocuments(let collection): try runAllDocuments(collection)
        }
    }

    // MARK: - Views

    private func runView(_ view: MapReduceView) throws -> QueryEnumerator {
        let (start, end, keys) = try query.checkedKeys()
        let collection = view.collection
        if query.indexUpdateMode == .before, !collection.database.config.readOnly { try view.updateIndex() }
        let reduce = query.mapOnly ? nil : view.reduceBlock
        // Paging happens in SQL unless rows are grouped or filtered first.
        let pagedInSQL = reduce == nil && query.postFilter == nil && keys == nil
        let (stored, sequence, stale) = try collection.read { storage in
            let target = try collection.database.requireRow(collection).lastSequence
            guard let state = try storage.view(collectionID: collection.id, name: view.name) else {
                return ([DatabaseStorage.ViewIndexRow](), target, target > 0)
            }
            var rows: [DatabaseStorage.ViewIndexRow] = []
            if let keys {
                for key in keys {
                    let bound = DatabaseStorage.RowBound(sortKey: JSONCollation.sortKey(key), inclusive: true)
                    rows += try storage.viewRows(
                        viewID: state.id, lower: bound, upper: bound, descending: false, limit: nil, offset: 0)
                }
            } else {
                let (lower, upper) = bounds(start: start, end: end)
                rows = try storage.viewRows(
                    viewID: state.id, lower: lower, upper: upper, descending: query.descending,
                    limit: pagedInSQL && query.limit != Int.max ? query.limit : nil, offset: pagedInSQL ? query.skip : 0)
            }
            return (rows, target, state.lastSequence < target)
        }
        if query.indexUpdateMode == .after, stale, !collection.database.config.readOnly {
            Task.detached { try? view.updateIndex() }
        }
        var rows: [QueryRow]
        if let reduce {
            rows = try reduced(stored, with: reduce)
        } else {
            let documents = query.includeDocs ? try bodies(of: Set(stored.map(\.documentID)), in: collection) : [:]
            rows = try stored.map { row in
                let value = try row.value.map { try JSONValue(parsing: $0) } ?? .null
                let document = documents[linkedID(value) ?? row.documentID]
                return QueryRow(
                    key: try JSONValue(parsing: row.key), value: value, sourceDocumentID: row.documentID,
                    sequence: row.sequence, revisionID: document?.revisionID, properties: document?.properties,
                    collection: collection)
            }
        }
        if !pagedInSQL { rows = page(rows) }
        return QueryEnumerator(rows: rows, sequenceNumber: sequence, isStale: stale)
    }

    /// The bounds of the key range, the start key being the high end when descending.
    private func bounds(start: JSONValue?, end: JSONValue?) -> (
        lower: DatabaseStorage.RowBound?, upper: DatabaseStorage.RowBound?
    ) {
        let first = start.map {
            DatabaseStorage.RowBound(
                sortKey: JSONCollation.sortKey($0), documentID: query.startKeyDocID, inclusive: query.inclusiveStart)
        }
        let last = end.map { key -> DatabaseStorage.RowBound in
            if query.prefixMatchLevel > 0, !query.descending {
                return DatabaseStorage.RowBound(
                    sortKey: JSONCollation.prefixUpperBound(key, level: query.prefixMatchLevel), inclusive: true)
            }
            return DatabaseStorage.RowBound(
                sortKey: JSONCollation.sortKey(key), documentID: query.endKeyDocID, inclusive: query.inclusiveEnd)
        }
        return query.descending ? (last, first) : (first, last)
    }

    /// Groups adjacent rows by their first `groupLevel` key elements (all rows when 0) and reduces each group.
    private func reduced(_ stored: [DatabaseStorage.ViewIndexRow], with reduce: ReduceBlock) throws -> [QueryRow] {
        var rows: [QueryRow] = []
        var groupKey: JSONValue?
        var keys: [Any] = []
        var values: [Any] = []
        func finishGroup() {
            guard let key = groupKey else { return }
            let result = reduce(keys, values, false)
            let value = (try? DocumentValues.json(from: result, path: "reduce") { _ in }) ?? .null
            rows.append(
                QueryRow(
                    key: query.groupLevel == 0 ? .null : key, value: value, sourceDocumentID: nil, sequence: 0,
                    collection: nil))
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
        }
        for row in stored {
            let key = try JSONValue(parsing: row.key)
            let group = Self.groupKey(of: key, level: query.groupLevel)
            if group != groupKey {
                finishGroup()
                groupKey = group
            }
            keys.append(DocumentValues.value(from: key))
            values.append(try row.value.map { DocumentValues.value(from: try JSONValue(parsing: $0)) } ?? NSNull())
        }
        finishGroup()
        return rows
    }

    /// The key a row is grouped by: the first `level` elements of an array key, a whole key otherwise; all rows share
    /// one group at level 0.
    static func groupKey(of key: JSONValue, level: Int) -> JSONValue {
        guard level > 0 else { return .null }
        if case .array(let elements) = key { return .array(Array(elements.prefix(level))) }
        return key
    }

    /// `postFilter`, `skip` and `limit`, applied in Swift.
    private func page(_ rows: [QueryRow]) -> [QueryRow] {
        let filtered = query.postFilter.map { filter in rows.filter(filter) } ?? rows
        return Array(filtered.dropFirst(query.skip).prefix(query.limit))
    }

    private func linkedID(_ value: JSONValue) -> String? {
        if case .object(let members) = value { return members["_id"]?.stringValue }
        return nil
    }

    /// The current revision and properties (with `_id` and `_rev`) of documents, by ID; deleted ones are left out.
    private func bodies(of ids: Set<String>, in collection: Collection) throws -> [String: (
        revisionID: String, properties: JSONValue
    )] {
        try collection.read { storage in
            var found: [String: (revisionID: String, properties: JSONValue)] = [:]
            for id in ids {
                guard let record = try storage.document(collectionID: collection.id, id: id, withTree: false),
                    !record.isDeleted, case .object(var members) = try JSONValue(parsing: record.body)
                else { continue }
                members["_id"] = .string(id)
                members["_rev"] = .string(record.revisionID)
                found[id] = (record.revisionID, .object(members))
            }
            return found
        }
    }

    // MARK: - All documents

    private func runAllDocuments(_ collection: Collection) throws -> QueryEnumerator {
        let (start, end, keys) = try query.checkedKeys()
        let mode = query.allDocsMode
        var selection = DatabaseStorage.AllDocumentsSelection()
        selection.bySequence = mode == .bySequence
        selection.includeDeleted = mode == .includeDeleted
        selection.onlyConflicts = mode == .onlyConflicts
        selection.descending = query.descending
        let first = try start.map { (value: try bound($0, option: "startKey"), inclusive: query.inclusiveStart) }
        var last = try end.map { (value: try bound($0, option: "endKey"), inclusive: query.inclusiveEnd) }
        if query.prefixMatchLevel > 0, !selection.bySequence, let prefix = end?.stringValue, !query.descending {
            last = (prefix + "\u{10FFFF}", true)
        }
        (selection.lower, selection.upper) = query.descending ? (last, first) : (first, last)
        let pagedInSQL = query.postFilter == nil && keys == nil
        if pagedInSQL {
            selection.limit = query.limit == Int.max ? nil : query.limit
            selection.offset = query.skip
        }
        let (records, sequence) = try collection.read { storage in
            let target = try collection.database.requireRow(collection).lastSequence
            guard let keys else { return (try storage.allDocuments(collectionID: collection.id, selection), target) }
            var records: [DocumentRecord] = []
            for key in keys {
                guard let id = key.stringValue else {
                    throw CouchetteError(.badInput, message: "All-documents keys are document IDs (strings)")
                }
                if let record = try storage.document(collectionID: collection.id, id: id, withTree: false),
                    selection.includeDeleted || !record.isDeleted,
                    !selection.onlyConflicts || record.flags.contains(.conflicted)
                {
                    records.append(record)
                }
            }
            return (records, target)
        }
        let showConflicts = mode == .showConflicts || mode == .onlyConflicts
        var rows: [QueryRow] = []
        rows.reserveCapacity(records.count)
        for record in records {
            var value: [String: JSONValue] = ["rev": .string(record.revisionID)]
            if record.isDeleted { value["deleted"] = true }
            var properties: JSONValue?
            if query.includeDocs, !record.isDeleted, case .object(var members) = try JSONValue(parsing: record.body) {
                members["_id"] = .string(record.documentID)
                members["_rev"] = .string(record.revisionID)
                properties = .object(members)
            }
            let conflicts =
                showConflicts && record.flags.contains(.conflicted)
                ? try collection.conflictingRevisions(documentID: record.documentID) : nil
            rows.append(
                QueryRow(
                    key: .string(record.documentID), value: .object(value), sourceDocumentID: record.documentID,
                    sequence: record.sequence, revisionID: record.revisionID, properties: properties,
                    conflictingRevisions: conflicts, collection: collection))
        }
        if !pagedInSQL { rows = page(rows) }
        return QueryEnumerator(rows: rows, sequenceNumber: sequence, isStale: false)
    }

    /// A key bound of an all-documents query: a document ID, or a sequence in `bySequence` mode.
    private func bound(_ key: JSONValue, option: String) throws -> any SQLiteBindable {
        if query.allDocsMode == .bySequence {
            guard let sequence = key.intValue else {
                throw CouchetteError(.badInput, message: "\(option) must be a sequence number in bySequence mode")
            }
            return sequence
        }
        guard let id = key.stringValue else {
            throw CouchetteError(.badInput, message: "\(option) must be a document ID (a string)")
        }
        return id
    }
}
