// MARK: - MemoryGrantIndex

/// The grant index of an in-memory (`walrus:`) ``SQLiteGatewayStorage``: the rows ``GrantIndex`` keeps in the
/// `grants` table of a file, kept in dictionaries instead.
///
/// A database in memory loses its grants with the process either way, and a grant row is the dearest row of a
/// write (a B-tree insert at one of as many places as there are principals, ~3 µs each in SQLite's memory
/// database against ~0.1 µs here): the Todo function's three grants per task list were a third of the gateway's
/// `_bulk_docs` ingest.
///
/// Changes are applied inside the storage's transaction and journaled, so that a rollback — of the transaction, or of
/// a savepoint inside a batch — takes them back (``rollback(to:)``); ``commit()`` forgets the journal.
struct MemoryGrantIndex: Sendable {
    /// A row's key within its principal's rows.
    private struct Key: Hashable, Sendable {
        var kind: DocumentGrant.Kind
        var sequence: UInt64
        var target: String
    }

    /// What a change replaced, to put it back.
    private struct UndoEntry: Sendable {
        var principal: String
        var key: Key
        var previousDocumentID: String?
    }

    /// Per principal, its rows (key → the ID of the document making the grant).
    private var rows: [String: [Key: String]] = [:]
    /// The changes since the last ``commit()``, oldest first.
    private var journal: [UndoEntry] = []

    /// A position in the journal, for ``rollback(to:)``.
    var mark: Int { journal.count }

    /// Applies a transaction's grant rows: deletions first, then insertions (the order ``PendingIndexRows`` needs).
    mutating func apply(_ pending: PendingIndexRows) {
        for key in pending.deletedGrants {
            set(
                nil, principal: key.grant.principal,
                key: Key(kind: key.grant.kind, sequence: key.sequence, target: key.grant.target))
        }
        for row in pending.insertedGrants.values {
            set(
                row.documentID, principal: row.grant.principal,
                key: Key(kind: row.grant.kind, sequence: row.sequence, target: row.grant.target))
        }
    }

    /// Makes the changes applied so far permanent.
    mutating func commit() {
        journal.removeAll(keepingCapacity: journal.count < 4_096)
    }

    /// Takes back the changes applied since `mark`, newest first.
    mutating func rollback(to mark: Int = 0) {
        while journal.count > mark {
            let entry = journal.removeLast()
            rows[entry.principal, default: [:]][entry.key] = entry.previousDocumentID
            if rows[entry.principal]?.isEmpty == true { rows[entry.principal] = nil }
        }
    }

    /// The targets of `kind` granted to `principal`, each with its earliest sequence
    /// (``GrantIndex/grants(kind:to:_:)``).
    func grants(kind: DocumentGrant.Kind, to principal: String) -> [String: UInt64] {
        var grants: [String: UInt64] = [:]
        for key in (rows[principal] ?? [:]).keys where key.kind == kind {
            if let known = grants[key.target], known <= key.sequence { continue }
            grants[key.target] = key.sequence
        }
        return grants
    }

    /// Every grant to `principal` with the document making it, ordered by sequence, kind and target
    /// (``GrantIndex/sources(to:_:)``).
    func sources(to principal: String) -> [DocumentGrantSource] {
        (rows[principal] ?? [:])
            .sorted { left, right in
                (left.key.sequence, left.key.kind.rawValue, left.key.target)
                    < (right.key.sequence, right.key.kind.rawValue, right.key.target)
            }
            .map { key, documentID in
                DocumentGrantSource(
                    grant: DocumentGrant(kind: key.kind, principal: principal, target: key.target),
                    sequence: key.sequence, documentID: documentID)
            }
    }

    // MARK: - Rows

    /// Sets (or with nil removes) a row, journaling what it replaced.
    private mutating func set(_ documentID: String?, principal: String, key: Key) {
        let previous: String?
        if let documentID {
            previous = rows[principal, default: [:]].updateValue(documentID, forKey: key)
        } else {
            previous = rows[principal]?.removeValue(forKey: key)
            if rows[principal]?.isEmpty == true { rows[principal] = nil }
        }
        journal.append(UndoEntry(principal: principal, key: key, previousDocumentID: previous))
    }
}
