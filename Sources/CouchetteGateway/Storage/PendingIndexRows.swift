// MARK: - PendingIndexRows

/// The index rows one write transaction adds and removes, kept until it writes them all at once: a storage records
/// each document change's ``IndexChanges`` here and writes the whole set together just before it commits.
///
/// Rows are netted as they are recorded: a row the transaction inserted and then deletes (a `_bulk_docs` request
/// updating a document twice) is never written. Deleted rows never share a key with rows inserted after them (they
/// sit at older sequences), except in a rebuild, which deletes a row and inserts it again: so a storage deletes
/// first, then inserts.
struct PendingIndexRows: Sendable {
    /// A channel row's key.
    struct ChannelKey: Hashable, Sendable {
        var channel: String
        var sequence: UInt64
    }

    /// A grant row's key.
    struct GrantKey: Hashable, Sendable {
        var grant: DocumentGrant
        var sequence: UInt64
    }

    /// Channel rows to insert, by key.
    private(set) var insertedChannels: [ChannelKey: IndexChanges.ChannelRow] = [:]
    /// Channel rows to delete.
    private(set) var deletedChannels: Set<ChannelKey> = []
    /// Grant rows to insert, by key.
    private(set) var insertedGrants: [GrantKey: IndexChanges.GrantRow] = [:]
    /// Grant rows to delete.
    private(set) var deletedGrants: Set<GrantKey> = []

    /// Whether nothing is pending.
    var isEmpty: Bool {
        insertedChannels.isEmpty && deletedChannels.isEmpty && insertedGrants.isEmpty && deletedGrants.isEmpty
    }

    /// Adds a change's index rows, cancelling rows this transaction inserted and now deletes.
    mutating func record(_ changes: IndexChanges) {
        for row in changes.deletedChannelRows {
            let key = ChannelKey(channel: row.channel, sequence: row.sequence)
            if insertedChannels.removeValue(forKey: key) == nil { deletedChannels.insert(key) }
        }
        for row in changes.insertedChannelRows {
            insertedChannels[ChannelKey(channel: row.channel, sequence: row.sequence)] = row
        }
        for row in changes.deletedGrantRows {
            let key = GrantKey(grant: row.grant, sequence: row.sequence)
            if insertedGrants.removeValue(forKey: key) == nil { deletedGrants.insert(key) }
        }
        for row in changes.insertedGrantRows {
            insertedGrants[GrantKey(grant: row.grant, sequence: row.sequence)] = row
        }
    }
}
