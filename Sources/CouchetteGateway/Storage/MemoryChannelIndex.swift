import CouchetteCore

// MARK: - MemoryChannelIndex

/// The channel index of an in-memory (`walrus:`) ``SQLiteGatewayStorage``: the rows ``ChannelIndex`` keeps in the
/// `channel_changes` table of a file, kept in arrays instead.
///
/// Each channel's rows are in sequence order, and all rows once more in (sequence, channel) order for the feeds of
/// users with many channels, so a write appends and a feed reads a range, as with the table; the two B-tree inserts
/// a row costs in SQLite were a third of the time the Todo ingest held the storage's lock. A deleted row stays as a
/// hole until half are holes.
///
/// Changes are journaled like ``MemoryGrantIndex``'s: ``rollback(to:)`` takes them back, ``commit()`` forgets them.
struct MemoryChannelIndex: Sendable {
    /// A row's value.
    struct Entry: Sendable, Equatable {
        var documentID: String
        var removed: Bool
    }

    /// A document's current revision and whether it is deleted, as the documents table has them (nil when absent).
    typealias DocumentLookup = (String) throws -> (revision: String, isDeleted: Bool)?

    /// One channel's rows, in sequence order; nil entries are holes.
    private struct ChannelRows: Sendable {
        var sequences: [UInt64] = []
        var entries: [Entry?] = []
        var holes = 0

        /// Sets (with nil, deletes) the row at `sequence`; returns the entry it had.
        mutating func set(_ entry: Entry?, at sequence: UInt64) -> Entry? {
            let index = SortedRows.firstIndex(in: sequences.count) { sequences[$0] < sequence }
            guard index < sequences.count, sequences[index] == sequence else {
                if let entry {
                    SortedRows.insert(sequence, at: index, into: &sequences)
                    SortedRows.insert(entry, at: index, into: &entries)
                }
                return nil
            }
            let previous = entries[index]
            entries[index] = entry
            holes += (previous != nil ? 1 : 0) - (entry != nil ? 1 : 0)
            return previous
        }
    }

    /// A row in (sequence, channel) order; a nil entry is a hole.
    private struct SequenceRow: Sendable {
        var sequence: UInt64
        var channel: String
        var entry: Entry?
    }

    private struct UndoEntry: Sendable {
        var channel: String
        var sequence: UInt64
        var previous: Entry?
    }

    private var channels: [String: ChannelRows] = [:]
    private var bySequence: [SequenceRow] = []
    private var bySequenceHoles = 0
    private var journal: [UndoEntry] = []

    /// A position in the journal, for ``rollback(to:)``.
    var mark: Int { journal.count }

    /// Applies one document change's channel rows as it is written: its deletions, then its insertions (rows at the
    /// change's own, newest, sequence, so each is an append).
    mutating func apply(_ changes: IndexChanges) {
        for row in changes.deletedChannelRows {
            let previous = set(nil, row.channel, row.sequence)
            journal.append(UndoEntry(channel: row.channel, sequence: row.sequence, previous: previous))
        }
        for row in changes.insertedChannelRows {
            let previous = set(Entry(documentID: row.documentID, removed: row.removed), row.channel, row.sequence)
            journal.append(UndoEntry(channel: row.channel, sequence: row.sequence, previous: previous))
        }
    }

    /// Makes the changes applied so far permanent, dropping holes where they have become half of the rows.
    mutating func commit() {
        guard !journal.isEmpty else { return }
        var touched: Set<String> = []
        for entry in journal where entry.previous != nil { touched.insert(entry.channel) }
        for channel in touched {
            guard var rows = channels[channel], rows.holes > 16, rows.holes * 2 > rows.entries.count else { continue }
            channels[channel] = nil  // unique, so the filtering below does not copy
            let kept = rows.entries.indices.filter { rows.entries[$0] != nil }
            rows.sequences = kept.map { rows.sequences[$0] }
            rows.entries = kept.map { rows.entries[$0] }
            rows.holes = 0
            if !rows.entries.isEmpty { channels[channel] = rows }
        }
        if bySequenceHoles > 64, bySequenceHoles * 2 > bySequence.count {
            bySequence.removeAll { $0.entry == nil }
            bySequenceHoles = 0
        }
        journal.removeAll(keepingCapacity: journal.count < 4_096)
    }

    /// Takes back the changes applied since `mark`, newest first.
    mutating func rollback(to mark: Int = 0) {
        while journal.count > mark {
            let undo = journal.removeLast()
            _ = set(undo.previous, undo.channel, undo.sequence)
        }
    }

    // MARK: - Reading

    /// The feed entries of the documents with rows in `channels` after `since`, as ``ChannelIndex``'s queries give
    /// them: per document its latest row's sequence, and the channels it left unless one of its rows says it is still
    /// in one; in sequence order, documents `lookup` does not find left out, at most `limit`.
    ///
    /// The channels are read range by range, or in one pass over all rows in sequence order when that reads fewer
    /// rows (``readsFewerRowsBySequence(_:since:)``; `readBySequence` forces either, for tests).
    func changes(
        inChannels selected: Set<String>, since: UInt64, limit: Int?, bySequence readBySequence: Bool? = nil,
        lookup: DocumentLookup
    ) throws -> [ChangeEntry] {
        var documents: [String: (sequence: UInt64, stillIn: Bool, removed: Set<String>)] = [:]
        func record(_ entry: Entry, channel: String, sequence: UInt64) {
            var document = documents[entry.documentID] ?? (0, false, [])
            document.sequence = max(document.sequence, sequence)
            if entry.removed { document.removed.insert(channel) } else { document.stillIn = true }
            documents[entry.documentID] = document
        }
        if readBySequence ?? readsFewerRowsBySequence(selected, since: since) {
            var index = SortedRows.firstIndex(in: bySequence.count) { bySequence[$0].sequence <= since }
            while index < bySequence.count {
                let row = bySequence[index]
                if let entry = row.entry, selected.contains(row.channel) {
                    record(entry, channel: row.channel, sequence: row.sequence)
                }
                index += 1
            }
        } else {
            for channel in selected {
                guard let rows = channels[channel] else { continue }
                var index = SortedRows.firstIndex(in: rows.sequences.count) { rows.sequences[$0] <= since }
                while index < rows.sequences.count {
                    if let entry = rows.entries[index] {
                        record(entry, channel: channel, sequence: rows.sequences[index])
                    }
                    index += 1
                }
            }
        }
        var result: [ChangeEntry] = []
        for (id, document) in documents.sorted(by: { $0.value.sequence < $1.value.sequence }) {
            if let limit, result.count >= limit { break }
            guard let current = try lookup(id) else { continue }
            result.append(
                ChangeEntry(
                    sequence: document.sequence, documentID: id, revisionID: try RevisionID(parsing: current.revision),
                    isDeleted: current.isDeleted,
                    removedFrom: document.stillIn ? [] : document.removed))
        }
        return result
    }

    /// Whether one pass over every row after `since` reads fewer rows than the selected channels' ranges after it: a
    /// user with 40,000 channels asking for the last few changes reads by sequence, and the same user's backfill of
    /// the few hundred channels granted since it last read, from sequence 0, by channel (it read every row of the
    /// database, 40,000 and more, when counting only the channels: ~2.5 ms for each feed request after a grant).
    /// Each channel counts one lookup more than its rows; counting stops once the ranges pass the single pass.
    private func readsFewerRowsBySequence(_ selected: Set<String>, since: UInt64) -> Bool {
        let firstAfter = SortedRows.firstIndex(in: bySequence.count) { bySequence[$0].sequence <= since }
        let bySequenceRows = bySequence.count - firstAfter
        // Each channel costs a lookup besides its rows.
        guard selected.count < bySequenceRows else { return true }
        var channelCost = 0
        for channel in selected {
            channelCost += 1
            if let rows = channels[channel] {
                let first = SortedRows.firstIndex(in: rows.sequences.count) { rows.sequences[$0] <= since }
                channelCost += rows.sequences.count - first
            }
            if channelCost > bySequenceRows { return true }
        }
        return false
    }

    /// Per channel, the documents in it (rows that are not removals), channels with none left out, by name.
    func channelCounts() -> [ChannelCount] {
        channels.compactMap { channel, rows in
            let count = rows.entries.reduce(0) { $0 + ($1.map { $0.removed ? 0 : 1 } ?? 0) }
            return count > 0 ? ChannelCount(channel: channel, documents: count) : nil
        }
        .sorted { $0.channel < $1.channel }
    }

    /// Every row as `channel@sequence`, `-` after a removal, in (sequence, channel) order: for tests.
    func rowDescriptions() -> [String] {
        bySequence.compactMap { row in
            row.entry.map { "\(row.channel)@\(row.sequence)\($0.removed ? "-" : "")" }
        }
    }

    // MARK: - Rows

    /// Sets (with nil, deletes) the row of (`channel`, `sequence`) in both orders; returns the entry it had.
    private mutating func set(_ entry: Entry?, _ channel: String, _ sequence: UInt64) -> Entry? {
        let previous: Entry?
        if entry == nil, channels[channel] == nil {
            previous = nil  // no row to delete: no empty channel left behind
        } else {
            previous = channels[channel, default: ChannelRows()].set(entry, at: sequence)
        }
        // The same row in (sequence, channel) order.
        let position = SortedRows.firstIndex(in: bySequence.count) {
            (bySequence[$0].sequence, bySequence[$0].channel) < (sequence, channel)
        }
        if position < bySequence.count, bySequence[position].sequence == sequence,
            bySequence[position].channel == channel
        {
            bySequence[position].entry = entry
            bySequenceHoles += (previous != nil ? 1 : 0) - (entry != nil ? 1 : 0)
        } else if let entry {
            let row = SequenceRow(sequence: sequence, channel: channel, entry: entry)
            SortedRows.insert(row, at: position, into: &bySequence)
        }
        return previous
    }

}
