// MARK: - DocumentTotals

/// The document counts and body bytes of ``SQLiteGatewayStorage`` (`GET /{db}/`'s `doc_count`, `doc_del_count` and
/// `sizes.external`), kept exact by the writes themselves so that reading them does not scan every row under the
/// storage's lock after each write (~5 ms at 40,000 documents, ~100 ms at a million, with every request waiting).
///
/// The totals are valid at one value of the connection's total change count (`sqlite3_total_changes`, which any
/// insert, update or delete moves, rolled back or not). A transaction records what its document rows add and
/// remove; when it commits, its changes are added to the totals if they were valid when it began, and the totals
/// become valid at the count after it. A write that does not record its rows (compaction, a migration) leaves the
/// count moved and the totals stale, so the next read counts again: a row change can make the totals be counted
/// afresh, never be wrong.
///
/// ```swift
/// var totals = DocumentTotals()
/// totals.store(StorageStatistics(documentCount: 2), atChanges: 10)
/// totals.begin(atChanges: 10)
/// totals.recordInsert(isDeleted: false, bytes: 30)       // a new document
/// totals.commit(atChanges: 12)                            // its row and an index row
/// totals.current(atChanges: 12)?.documentCount            // 3
/// ```
///
/// Not thread-safe: ``SQLiteGatewayStorage`` uses it under its lock.
struct DocumentTotals {
    /// How a transaction's writes change the totals.
    private struct Delta {
        var live = 0
        var deleted = 0
        var bytes = 0
    }

    /// The totals, and the total change count at which they are valid.
    private var counted: (atChanges: Int, statistics: StorageStatistics)?
    /// The open transaction: the change count it began at, and what it changed (nil once unknown).
    private var open: (startedAt: Int, delta: Delta?)?

    /// The totals valid at `changes`, or nil when they must be counted (``store(_:atChanges:)``).
    func current(atChanges changes: Int) -> StorageStatistics? {
        guard let counted, counted.atChanges == changes else { return nil }
        return counted.statistics
    }

    /// Remembers totals just counted at `changes` (their file sizes are not kept).
    mutating func store(_ statistics: StorageStatistics, atChanges changes: Int) {
        counted = (changes, StorageStatistics(
            documentCount: statistics.documentCount, deletedDocumentCount: statistics.deletedDocumentCount,
            externalSize: statistics.externalSize))
    }

    // MARK: - Transactions

    /// A transaction begins at change count `changes`.
    mutating func begin(atChanges changes: Int) {
        open = (changes, Delta())
    }

    /// The open transaction inserted a document row.
    mutating func recordInsert(isDeleted: Bool, bytes: Int) {
        record(isDeleted: isDeleted, bytes: bytes, sign: 1)
    }

    /// The open transaction deleted a document row.
    mutating func recordRemoval(isDeleted: Bool, bytes: Int) {
        record(isDeleted: isDeleted, bytes: bytes, sign: -1)
    }

    /// Part of the open transaction was rolled back (a savepoint): what it changed is no longer known.
    mutating func forgetOpenChanges() {
        open?.delta = nil
    }

    /// The open transaction committed; the connection's change count is now `changes`.
    mutating func commit(atChanges changes: Int) {
        defer { open = nil }
        guard let open, let delta = open.delta, var counted, counted.atChanges == open.startedAt else { return }
        counted.statistics.documentCount += delta.live
        counted.statistics.deletedDocumentCount += delta.deleted
        counted.statistics.externalSize += delta.bytes
        counted.atChanges = changes
        self.counted = counted
    }

    /// The open transaction rolled back whole; the connection's change count is now `changes`.
    mutating func rollback(atChanges changes: Int) {
        defer { open = nil }
        guard let open, let counted, counted.atChanges == open.startedAt else { return }
        self.counted = (changes, counted.statistics)
    }

    private mutating func record(isDeleted: Bool, bytes: Int, sign: Int) {
        guard open?.delta != nil else { return }
        if isDeleted { open?.delta?.deleted += sign } else { open?.delta?.live += sign }
        open?.delta?.bytes += sign * bytes
    }
}
