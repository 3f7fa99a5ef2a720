// MARK: - MemoryGrantIndex

/// The grant index of an in-memory (`walrus:`) ``SQLiteGatewayStorage``: the rows ``GrantIndex`` keeps in the
/// `grants` table of a file, kept in arrays instead.
///
/// A database in memory loses its grants with the process either way, and a grant row is the dearest row of a
/// write (a B-tree insert at one of as many places as there are principals, ~3 µs each in SQLite's memory
/// database): the Todo function's three grants per task list were a third of the gateway's `_bulk_docs` ingest.
/// Here each principal's rows are an array in sequence order, so a new grant is an append.
///
/// Changes are applied inside the storage's transaction and journaled, so that a rollback — of the transaction, or of
/// a savepoint inside a batch — takes them back (``rollback(to:)``); ``commit()`` forgets the journal.
struct MemoryGrantIndex: Sendable {
    /// A row's key within its principal's rows.
    private struct Key: Sendable {
        var sequence: UInt64
        var kind: DocumentGrant.Kind
        var target: String
    }

    /// What a change replaced, to put it back.
    private struct UndoEntry: Sendable {
        var principal: String
        var key: Key
        var previousDocumentID: String?
    }

    /// One principal's rows.
    private struct PrincipalRows: Sendable {
        /// In sequence order; a deleted row keeps its place (no document) until ``compact()``.
        var rows: [(key: Key, documentID: String?)] = []
        var deletedCount = 0

        /// Sets (with nil, deletes) the row of `key`; returns the document it had.
        mutating func set(_ documentID: String?, at key: Key) -> String? {
            // The rows of the key's sequence (none yet, at the end, for a new grant).
            var position = SortedRows.firstIndex(in: rows.count) { rows[$0].key.sequence < key.sequence }
            while position < rows.endIndex, rows[position].key.sequence == key.sequence {
                if rows[position].key.kind == key.kind, rows[position].key.target == key.target {
                    let previous = rows[position].documentID
                    rows[position].documentID = documentID
                    if previous != nil, documentID == nil { deletedCount += 1 }
                    if previous == nil, documentID != nil { deletedCount -= 1 }
                    return previous
                }
                position += 1
            }
            if let documentID { SortedRows.insert((key, documentID), at: position, into: &rows) }
            return nil
        }

        /// Drops deleted rows once they are half of them.
        mutating func compact() {
            guard deletedCount > 16, deletedCount * 2 > rows.count else { return }
            rows.removeAll { $0.documentID == nil }
            deletedCount = 0
        }
    }

    /// Per principal, its rows.
    private var principals: [String: PrincipalRows] = [:]
    /// The changes since the last ``commit()``, oldest first.
    private var journal: [UndoEntry] = []

    /// A position in the journal, for ``rollback(to:)``.
    var mark: Int { journal.count }

    /// Applies one document change's grant rows as it is written: its deletions, then its insertions.
    mutating func apply(_ changes: IndexChanges) {
        for row in changes.deletedGrantRows {
            set(
                nil, principal: row.grant.principal,
                key: Key(sequence: row.sequence, kind: row.grant.kind, target: row.grant.target))
        }
        for row in changes.insertedGrantRows {
            set(
                row.documentID, principal: row.grant.principal,
                key: Key(sequence: row.sequence, kind: row.grant.kind, target: row.grant.target))
        }
    }

    /// Makes the changes applied so far permanent.
    mutating func commit() {
        guard !journal.isEmpty else { return }
        var touched: Set<String> = []
        for entry in journal where entry.previousDocumentID != nil { touched.insert(entry.principal) }
        for principal in touched { principals[principal]?.compact() }
        journal.removeAll(keepingCapacity: journal.count < 4_096)
    }

    /// Takes back the changes applied since `mark`, newest first.
    mutating func rollback(to mark: Int = 0) {
        while journal.count > mark {
            let entry = journal.removeLast()
            _ = principals[entry.principal, default: PrincipalRows()].set(entry.previousDocumentID, at: entry.key)
        }
    }

    /// The targets of `kind` granted to `principal`, each with its earliest sequence
    /// (``GrantIndex/grants(kind:to:_:)``).
    func grants(kind: DocumentGrant.Kind, to principal: String) -> [String: UInt64] {
        var grants: [String: UInt64] = [:]
        for row in principals[principal]?.rows ?? [] where row.documentID != nil && row.key.kind == kind {
            if grants[row.key.target] == nil { grants[row.key.target] = row.key.sequence }
        }
        return grants
    }

    /// Every grant to `principal` with the document making it, ordered by sequence, kind and target
    /// (``GrantIndex/sources(to:_:)``).
    func sources(to principal: String) -> [DocumentGrantSource] {
        (principals[principal]?.rows ?? [])
            .compactMap { row in
                row.documentID.map { documentID in
                    DocumentGrantSource(
                        grant: DocumentGrant(kind: row.key.kind, principal: principal, target: row.key.target),
                        sequence: row.key.sequence, documentID: documentID)
                }
            }
            .sorted { left, right in
                (left.sequence, left.grant.kind.rawValue, left.grant.target)
                    < (right.sequence, right.grant.kind.rawValue, right.grant.target)
            }
    }

    // MARK: - Rows

    /// Sets (or with nil removes) a row, journaling what it replaced.
    private mutating func set(_ documentID: String?, principal: String, key: Key) {
        let previous = principals[principal, default: PrincipalRows()].set(documentID, at: key)
        journal.append(UndoEntry(principal: principal, key: key, previousDocumentID: previous))
    }
}
