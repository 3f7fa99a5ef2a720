// MARK: - IndexChanges

/// The rows of the channel and grant indexes that document changes add and remove, worked out without touching
/// storage, so that every backend (``SQLiteGatewayStorage``, ``PostgresGatewayStorage``) keeps the same rows.
///
/// The channel index holds, for each document and each channel it is in or has left, one row at the sequence of
/// its last change while in the channel, or of its leaving it: a document's current channels' rows are at its
/// sequence (every change rewrites them), those of channels it left at its ``StoredDocument/channelRemovals``. The
/// grant index holds every grant the current revisions make, at the sequence of the change that first made it (spec:
/// sync-function.md §7.2): a grant a new winning revision repeats keeps its row, one it drops loses it (revocation).
///
/// Deleted rows never share a key with inserted ones (they sit at older sequences), so a backend may apply the
/// deletions and insertions in either order.
struct IndexChanges: Sendable {
    /// A row of the channel index.
    struct ChannelRow: Sendable, Hashable {
        var channel: String
        var sequence: UInt64
        var documentID: String
        var removed: Bool
    }

    /// A row of the grant index.
    struct GrantRow: Sendable, Hashable {
        var grant: DocumentGrant
        var sequence: UInt64
        var documentID: String
    }

    /// Channel rows to delete, by key (channel, sequence).
    var deletedChannelRows: [(channel: String, sequence: UInt64)] = []
    /// Channel rows to insert.
    var insertedChannelRows: [ChannelRow] = []
    /// Grant rows to delete, by key (grant, sequence).
    var deletedGrantRows: [(grant: DocumentGrant, sequence: UInt64)] = []
    /// Grant rows to insert.
    var insertedGrantRows: [GrantRow] = []

    /// Whether nothing changes.
    var isEmpty: Bool {
        deletedChannelRows.isEmpty && insertedChannelRows.isEmpty && deletedGrantRows.isEmpty
            && insertedGrantRows.isEmpty
    }

    /// The changes with rows at ``EncodedWrite/pendingSequence`` moved to `sequence` (the write's, once known).
    func settingPendingSequence(to sequence: UInt64) -> IndexChanges {
        var changes = self
        let pending = EncodedWrite.pendingSequence
        for index in changes.insertedChannelRows.indices where changes.insertedChannelRows[index].sequence == pending {
            changes.insertedChannelRows[index].sequence = sequence
        }
        for index in changes.insertedGrantRows.indices where changes.insertedGrantRows[index].sequence == pending {
            changes.insertedGrantRows[index].sequence = sequence
        }
        return changes
    }

    // MARK: - Recording

    /// Records a write of `document` at its new sequence, and updates its ``StoredDocument/channelRemovals`` and
    /// ``StoredDocument/grantSequences`` to match.
    ///
    /// - Parameter previous: The document as stored before this change; nil for a new (or purged) document.
    mutating func recordUpdate(of document: inout StoredDocument, previous: StoredDocument?) {
        let current = document.currentChannels
        var removals = previous?.channelRemovals ?? [:]
        if let previous {
            for channel in previous.currentChannels {
                deletedChannelRows.append((channel, previous.sequence))
                if !current.contains(channel) {
                    removals[channel] = document.sequence
                    insertedChannelRows.append(
                        ChannelRow(channel: channel, sequence: document.sequence, documentID: document.id, removed: true))
                }
            }
        }
        for channel in current {
            if let left = removals.removeValue(forKey: channel) { deletedChannelRows.append((channel, left)) }
            insertedChannelRows.append(
                ChannelRow(channel: channel, sequence: document.sequence, documentID: document.id, removed: false))
        }
        document.channelRemovals = removals

        // Grants are walked in the document's access maps, not gathered into a set first: this runs for every write.
        let before = previous?.grantSequences ?? [:]
        var sequences: [DocumentGrant: UInt64] = [:]
        for (grant, sequence) in before where !document.makes(grant) {
            deletedGrantRows.append((grant, sequence))
        }
        let sequence = document.sequence
        let documentID = document.id
        document.forEachGrant { grant in
            if let kept = before.isEmpty ? nil : before[grant] {
                sequences[grant] = kept
            } else {
                insertedGrantRows.append(GrantRow(grant: grant, sequence: sequence, documentID: documentID))
                sequences[grant] = sequence
            }
        }
        document.grantSequences = sequences
    }

    /// Records the rows of a document as it is stored (rebuilding the indexes).
    mutating func recordInsertion(of document: StoredDocument) {
        for channel in document.currentChannels {
            insertedChannelRows.append(
                ChannelRow(channel: channel, sequence: document.sequence, documentID: document.id, removed: false))
        }
        for (channel, sequence) in document.channelRemovals where !document.currentChannels.contains(channel) {
            insertedChannelRows.append(
                ChannelRow(channel: channel, sequence: sequence, documentID: document.id, removed: true))
        }
        document.forEachGrant { grant in
            insertedGrantRows.append(
                GrantRow(
                    grant: grant, sequence: document.grantSequences[grant] ?? document.sequence,
                    documentID: document.id))
        }
    }

    /// Records the removal of every row of a document that is going away (purge).
    mutating func recordDeletion(of document: StoredDocument) {
        for channel in document.currentChannels { deletedChannelRows.append((channel, document.sequence)) }
        for (channel, sequence) in document.channelRemovals { deletedChannelRows.append((channel, sequence)) }
        for (grant, sequence) in document.grantSequences { deletedGrantRows.append((grant, sequence)) }
    }
}
