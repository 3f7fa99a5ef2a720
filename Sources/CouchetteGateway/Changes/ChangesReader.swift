import CouchetteCore

// MARK: - ChangesReader

/// Reads one caller's `_changes` entries from a database: which changes they may see, the filters, and the
/// form of each entry (spec: gateway-rest-api.md §11.2 points 1–4).
///
/// The admin sees every change, including documents in no channel; a user sees the channels they can read
/// (all of them with `*`). A `sync_gateway/bychannel` list narrows that set; channels the user cannot read are
/// silently dropped. Removals come from ``ChangeEntry/removedFrom``.
///
/// ```swift
/// let reader = ChangesReader(database: database, caller: .admin, options: ChangesOptions(since: 3))
/// let batch = try await reader.read(after: 3, limit: nil)
/// batch.rows.map(\.sequence)  // [4, 5]
/// ```
public struct ChangesReader: Sendable {
    // MARK: - Selection

    /// The changes a reader selects by channel.
    public enum Selection: Sendable, Hashable {
        /// Every change, documents in no channel included.
        case everything
        /// Changes of documents that are, or were until the change, in one of these channels.
        case channels(Set<String>)
    }

    // MARK: - Batch

    /// The result of one read.
    public struct Batch: Sendable, Hashable {
        /// The entries, in sequence order.
        public var rows: [ChangesRow]
        /// The sequence the read got to: the next read continues after it.
        public var position: UInt64
        /// Whether the read reached the end of the changes (rather than a limit).
        public var isExhausted: Bool
        /// Whether the storage had entries past the read's `end` (committed after the feed took it): a document that
        /// changed meanwhile moved there, and a further read finds it.
        public var passedEnd = false
    }

    // MARK: - Properties

    /// The database read.
    public let database: GatewayDatabase

    /// Who reads.
    public let caller: Caller

    /// The request's options.
    public let options: ChangesOptions

    /// The channels selected.
    public let selection: Selection

    /// How many changes one storage query fetches when no limit is smaller.
    public static let fetchSize = 200

    // MARK: - Initialiser

    /// Creates a reader for `caller`'s changes in `database`.
    public init(database: GatewayDatabase, caller: Caller, options: ChangesOptions) {
        self.database = database
        self.caller = caller
        self.options = options
        self.selection = Self.selection(caller: caller, filter: options.filter)
    }

    /// The same reader for `caller` (a reloaded user), with the selection its channels allow now.
    public func reading(as caller: Caller) -> ChangesReader {
        ChangesReader(database: database, caller: caller, options: options)
    }

    /// The channels a caller's feed selects: the bychannel list (`*` meaning all) intersected with what the
    /// caller can read.
    public static func selection(caller: Caller, filter: ChangesFilter) -> Selection {
        var requested: Set<String>?
        if case .channels(let channels) = filter, !channels.contains(PrincipalName.allChannels) {
            requested = channels
        }
        switch (requested, caller.readableChannels) {
        case (nil, nil): return .everything
        case (nil, let readable?): return .channels(readable)
        case (let requested?, nil): return .channels(requested)
        case (let requested?, let readable?): return .channels(requested.intersection(readable))
        }
    }

    // MARK: - Reading

    /// Reads the entries after `position`, up to `limit` of them, and none after `end`.
    ///
    /// Without a limit a read returns at most about ``fetchSize`` entries; call again after
    /// ``Batch/position`` until ``Batch/isExhausted``.
    ///
    /// - Parameters:
    ///   - position: The sequence already read.
    ///   - end: The last sequence to read (a feed's snapshot); nil for none. A read that passes it is exhausted,
    ///     at position `end`.
    ///   - limit: The most entries to return; nil for no limit.
    /// - Throws: ``GatewayError`` from the storage (503 once it is closed).
    public func read(after position: UInt64, through end: UInt64? = nil, limit: Int?) async throws(GatewayError)
        -> Batch
    {
        if case .documentIDs(let ids) = options.filter {
            return try await readDocuments(ids, after: position, through: end, limit: limit)
        }
        let fetchSize = limit.map { min(max($0, 1), Self.fetchSize) } ?? Self.fetchSize
        var rows: [ChangesRow] = []
        var position = position
        while true {
            let entries = try await fetch(selection, after: position, limit: fetchSize)
            let page =
                readsPages
                ? try await page(of: entries.filter { entry in (end.map { entry.sequence <= $0 } ?? true) && accepts(entry) })
                : ChangesPage()
            for entry in entries {
                if let end, entry.sequence > end {
                    return Batch(rows: rows, position: max(position, end), isExhausted: true, passedEnd: true)
                }
                position = entry.sequence
                guard accepts(entry) else { continue }
                rows.append(row(for: entry, page: page))
                if let limit, rows.count >= limit {
                    return Batch(rows: rows, position: position, isExhausted: false)
                }
            }
            if entries.count < fetchSize { return Batch(rows: rows, position: position, isExhausted: true) }
            if !rows.isEmpty { return Batch(rows: rows, position: position, isExhausted: false) }
        }
    }

    /// The storage's entries after `position` for `selection`.
    func fetch(_ selection: Selection, after position: UInt64, limit: Int) async throws(GatewayError) -> [ChangeEntry] {
        switch selection {
        case .everything:
            try await database.storage.fetchChanges(since: position, limit: limit)
        case .channels(let channels):
            try await database.storage.fetchChanges(inChannels: channels, since: position, limit: limit)
        }
    }

    /// Whether rows need more than their entries (``page(of:)``): `include_docs` or `style=all_docs`.
    var readsPages: Bool {
        options.includeDocs || options.includeAllLeaves
    }

    /// What the rows of `entries` (those of a page that become rows) need beside them, read at once: the documents
    /// for `include_docs` (their leaves too for `style=all_docs`), else the leaves alone, without bodies.
    func page(of entries: [ChangeEntry]) async throws(GatewayError) -> ChangesPage {
        guard !entries.isEmpty, readsPages else { return ChangesPage() }
        let ids = entries.map(\.documentID)
        guard options.includeDocs else {
            return ChangesPage(leaves: try await database.storage.fetchLeafRevisions(ids: ids))
        }
        return ChangesPage(
            documents: try await database.storage.fetchDocuments(ids: ids, winnerAsText: false),
            includingLeaves: options.includeAllLeaves)
    }

    /// `_doc_ids`: each named document's latest change, if the caller may see it; the documents read at once.
    private func readDocuments(_ ids: [String], after position: UInt64, through end: UInt64?, limit: Int?)
        async throws(GatewayError) -> Batch
    {
        let documents = try await database.storage.fetchDocuments(ids: Array(Set(ids)), winnerAsText: false)
        var entries: [ChangeEntry] = []
        for document in documents.values {
            guard document.sequence > position,
                end.map({ document.sequence <= $0 }) ?? true,
                let entry = visibleEntry(of: document), accepts(entry)
            else { continue }
            entries.append(entry)
        }
        entries.sort { $0.sequence < $1.sequence }
        var isExhausted = true
        if let limit, entries.count > limit {
            entries.removeLast(entries.count - limit)
            isExhausted = false
        }
        let page = ChangesPage(documents: documents, includingLeaves: options.includeAllLeaves)
        let rows = entries.map { row(for: $0, page: page) }
        return Batch(rows: rows, position: entries.last?.sequence ?? position, isExhausted: isExhausted)
    }

    /// A document's latest change as the selection sees it: an entry, a removal (its previous revision was
    /// in a selected channel, its current one is in none), or nothing.
    private func visibleEntry(of document: StoredDocument) -> ChangeEntry? {
        guard let winner = document.winner else { return nil }
        var entry = ChangeEntry(
            sequence: document.sequence, documentID: document.id, revisionID: winner.id, isDeleted: winner.isDeleted)
        guard case .channels(let channels) = selection else { return entry }
        if !document.currentChannels.isDisjoint(with: channels) { return entry }
        let previous = winner.parent.flatMap { document.channels[$0] } ?? []
        let lost = previous.intersection(channels)
        guard !lost.isEmpty else { return nil }
        entry.removedFrom = lost
        return entry
    }

    /// The `revoked` entries (``ChangesRow/revoked(_:revision:sequence:)``, at `sequence`) of documents the caller
    /// lost access to by losing a channel after `since`: the live documents of those channels whose latest change
    /// the channel was still served through (so no document made or changed later is named), that the caller cannot
    /// read now through any channel.
    func revocationRows(_ revoked: [String: RevokedChannel], since: UInt64, at sequence: UInt64)
        async throws(GatewayError) -> [ChangesRow]
    {
        guard let readable = caller.readableChannels else { return [] }
        var found: [String: RevisionID] = [:]
        for (channel, revocation) in revoked where revocation.revokedAt > since && !readable.contains(channel) {
            let candidates = try await database.storage.fetchChanges(inChannels: [channel], since: 0, limit: nil).filter {
                $0.removedFrom.isEmpty && !$0.isDeleted && $0.sequence <= revocation.servedThrough
                    && found[$0.documentID] == nil
            }
            let documents = try await database.storage.fetchDocuments(
                ids: candidates.map(\.documentID), winnerAsText: true)
            for entry in candidates {
                guard found[entry.documentID] == nil, let document = documents[entry.documentID],
                    document.currentChannels.isDisjoint(with: readable)
                else { continue }
                found[entry.documentID] = entry.revisionID
            }
        }
        return found.sorted { $0.key < $1.key }.map { id, revision in
            ChangesRow.revoked(id, revision: revision.description, sequence: sequence)
        }
    }

    /// Whether `active_only` keeps an entry: it drops deletions and removals.
    func accepts(_ entry: ChangeEntry) -> Bool {
        !(options.activeOnly && (entry.isDeleted || !entry.removedFrom.isEmpty))
    }

    // MARK: - Entries

    /// The JSON entry of a change, under its own sequence or the backfill position `sequence`.
    ///
    /// - Parameter page: What ``page(of:)`` read for the entry's page: the leaves for `style=all_docs`, the documents
    ///   for `include_docs`.
    func row(for entry: ChangeEntry, sequence: ChangeSequence? = nil, page: ChangesPage) -> ChangesRow {
        let sequence = sequence ?? ChangeSequence(entry.sequence)
        var revisions = [entry.revisionID]
        if options.includeAllLeaves {
            // CouchDB's order: the winner, then the other leaves in winning order (live ones first).
            revisions += (page.leaves?[entry.documentID] ?? []).filter { $0 != entry.revisionID }
        }
        var members: [String: JSONValue] = [
            "seq": sequence.jsonValue,
            "id": .string(entry.documentID),
            "changes": .array(revisions.map { ["rev": .string($0.description)] }),
        ]
        if entry.isDeleted { members["deleted"] = true }
        if !entry.removedFrom.isEmpty { members["removed"] = .array(entry.removedFrom.sorted().map(JSONValue.string)) }
        if options.includeDocs, let body = body(of: entry, in: page.documents ?? [:]) { members["doc"] = body }
        return ChangesRow(sequence: sequence, json: .object(members))
    }

    /// The body `include_docs` adds: the revision as the caller may see it (a `_removed` stub outside their
    /// channels), or `{"_id","_rev","_deleted":true}` for a tombstone; nil when it cannot be read.
    ///
    /// - Parameter documents: The page's live documents, read at once.
    private func body(of entry: ChangeEntry, in documents: [String: StoredDocument]) -> JSONValue? {
        if entry.isDeleted {
            return ["_id": .string(entry.documentID), "_rev": .string(entry.revisionID.description), "_deleted": true]
        }
        var read = ReadOptions(includeAttachments: options.includeAttachments)
        read.includeConflicts = options.includeConflicts
        return try? database.documents.revision(
            id: entry.documentID, revision: entry.revisionID, as: caller, options: read, in: documents
        ).json
    }
}

// MARK: - ChangesPage

/// What a page of ``ChangesReader`` rows needs beside its entries, read at once for the page
/// (``ChangesReader/page(of:)``).
struct ChangesPage {
    /// The leaf revisions of the page's documents, for `style=all_docs`.
    var leaves: [String: [RevisionID]]?
    /// The page's documents, for `include_docs`.
    var documents: [String: StoredDocument]?

    init(leaves: [String: [RevisionID]]? = nil, documents: [String: StoredDocument]? = nil) {
        self.leaves = leaves
        self.documents = documents
    }

    /// The page of documents already read, with their leaves when `includingLeaves`.
    init(documents: [String: StoredDocument], includingLeaves: Bool) {
        self.documents = documents
        leaves = includingLeaves ? documents.mapValues { $0.tree.leaves.map(\.id) } : nil
    }
}
