// MARK: - MemoryIndex

/// The index of a database in memory (`walrus:`): its channel rows (``MemoryChannelIndex``) and grant rows
/// (``MemoryGrantIndex``) instead of the `channel_changes` and `grants` tables a file keeps, applied, committed and
/// rolled back together with the storage's transaction.
struct MemoryIndex: Sendable {
    /// A position in both journals, for ``rollback(to:)``.
    struct Mark: Sendable {
        var channels: Int
        var grants: Int
    }

    var channels = MemoryChannelIndex()
    var grants = MemoryGrantIndex()

    /// Where the journals are now.
    var mark: Mark { Mark(channels: channels.mark, grants: grants.mark) }

    /// Applies one document change's index rows, as it is written (a file's tables take a transaction's rows
    /// together, netted by ``PendingIndexRows``, to save statements; arrays need no netting).
    mutating func apply(_ changes: IndexChanges) {
        channels.apply(changes)
        grants.apply(changes)
    }

    /// Makes the changes applied so far permanent.
    mutating func commit() {
        channels.commit()
        grants.commit()
    }

    /// Takes back the changes applied since `mark` (all of them without one).
    mutating func rollback(to mark: Mark? = nil) {
        channels.rollback(to: mark?.channels ?? 0)
        grants.rollback(to: mark?.grants ?? 0)
    }
}
