import CouchetteCore
import CouchetteSQLite

// MARK: - ChannelIndex

/// The `channel_changes` table of ``SQLiteGatewayStorage``, behind channel-filtered `_changes` feeds: for each
/// document and each channel it is in or has left, one row at the sequence of its last change while in the
/// channel, or of its leaving it.
///
/// Rows are keyed by channel then sequence, so a feed reads a range per channel and a write appends to each
/// channel's rows. A document's rows are found without an index: those of its current channels are at its
/// sequence (every change rewrites them), those of channels it left at its ``StoredDocument/channelRemovals``.
enum ChannelIndex {
    /// The table (schema version 3).
    static let createTable = """
        CREATE TABLE channel_changes (
            channel TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            doc_id TEXT NOT NULL,
            removed INTEGER NOT NULL,
            PRIMARY KEY (channel, sequence)
        ) WITHOUT ROWID;
        """

    /// Moves the rows of `document` to its new sequence: its current channels at it, channels it just left
    /// marked removed at it (recorded in its ``StoredDocument/channelRemovals``).
    ///
    /// - Parameter previous: The document as stored before this change; nil for a new (or purged) document.
    static func update(_ document: inout StoredDocument, previous: StoredDocument?, _ connection: Connection) throws {
        let current = document.currentChannels
        var removals = previous?.channelRemovals ?? [:]
        if let previous {
            for channel in previous.currentChannels {
                try delete(channel, at: previous.sequence, connection)
                if !current.contains(channel) {
                    removals[channel] = document.sequence
                    try insert(channel, at: document.sequence, documentID: document.id, removed: true, connection)
                }
            }
        }
        for channel in current {
            if let left = removals.removeValue(forKey: channel) { try delete(channel, at: left, connection) }
            try insert(channel, at: document.sequence, documentID: document.id, removed: false, connection)
        }
        document.channelRemovals = removals
    }

    /// Inserts the rows of a document as it is stored (rebuilding the index).
    static func insertRows(of document: StoredDocument, _ connection: Connection) throws {
        for channel in document.currentChannels {
            try insert(channel, at: document.sequence, documentID: document.id, removed: false, connection)
        }
        for (channel, sequence) in document.channelRemovals where !document.currentChannels.contains(channel) {
            try insert(channel, at: sequence, documentID: document.id, removed: true, connection)
        }
    }

    /// Deletes the rows of a document that is going away (purge).
    static func deleteRows(of document: StoredDocument, _ connection: Connection) throws {
        for channel in document.currentChannels { try delete(channel, at: document.sequence, connection) }
        for (channel, sequence) in document.channelRemovals { try delete(channel, at: sequence, connection) }
    }

    // MARK: - Rows

    private static func insert(
        _ channel: String, at sequence: UInt64, documentID: String, removed: Bool, _ connection: Connection
    ) throws {
        try connection.execute(
            "INSERT INTO channel_changes (channel, sequence, doc_id, removed) VALUES (?, ?, ?, ?)"
        ) { statement in
            try statement.bind(channel, at: 1)
            try statement.bind(Int64(sequence), at: 2)
            try statement.bind(documentID, at: 3)
            try statement.bind(removed, at: 4)
        }
    }

    private static func delete(_ channel: String, at sequence: UInt64, _ connection: Connection) throws {
        try connection.execute("DELETE FROM channel_changes WHERE channel = ? AND sequence = ?") { statement in
            try statement.bind(channel, at: 1)
            try statement.bind(Int64(sequence), at: 2)
        }
    }
}
