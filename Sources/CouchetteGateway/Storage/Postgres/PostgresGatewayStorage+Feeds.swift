import CouchetteCore
import PostgresNIO

// MARK: - Feeds

/// Feed reads: every document's latest change, or those of some channels, after a sequence and up to the stable
/// sequence (below which nothing commits any more).
///
/// Feeds read through the `async` calls (``fetchChanges(since:limit:)``), which hold no thread while they wait for a
/// connection or for PostgreSQL, and which share one answer among the feeds woken by the same commit
/// (``PostgresFeedReads``). The synchronous calls serve a transaction's own reads and callers without a task.
extension PostgresGatewayStorage {
    public func changes(since: UInt64, limit: Int?) throws(GatewayError) -> [ChangeEntry] {
        try withConnection { link throws(GatewayError) in
            var read = StableRead(since: since, limit: limit)
            while !read.isOver, let through = read.next(stable: try stableSequence(link)) {
                guard through > since else { continue }
                read.found(try Self.decodeChanges(try link.query(Self.changesQuery(since: since, through: through, limit: limit))))
            }
            return read.entries
        }
    }

    public func changes(inChannels channels: Set<String>, since: UInt64, limit: Int?) throws(GatewayError)
        -> [ChangeEntry]
    {
        guard !channels.isEmpty else { return [] }
        return try withConnection { link throws(GatewayError) in
            var read = StableRead(since: since, limit: limit)
            while !read.isOver, let through = read.next(stable: try stableSequence(link)) {
                guard through > since else { continue }
                let query = Self.channelChangesQuery(channels, since: since, through: through, limit: limit)
                read.found(try Self.decodeChannelChanges(try link.query(query)))
            }
            return read.entries
        }
    }

    /// ``changes(since:limit:)`` holding no thread, its answer shared by the feeds woken by one commit.
    public func fetchChanges(since: UInt64, limit: Int?) async throws(GatewayError) -> [ChangeEntry] {
        // A transaction's own reads are its own: no other read's answer is theirs.
        guard openTransaction == nil else { return try changes(since: since, limit: limit) }
        return try await sharedRead(channels: nil, since: since, limit: limit) { () async throws(GatewayError) in
            try await withConnection { link async throws(GatewayError) in
                var read = StableRead(since: since, limit: limit)
                while !read.isOver, let through = read.next(stable: try await stableSequence(link)) {
                    guard through > since else { continue }
                    let query = Self.changesQuery(since: since, through: through, limit: limit)
                    read.found(try Self.decodeChanges(try await link.query(query)))
                }
                return read.entries
            }
        }
    }

    /// ``changes(inChannels:since:limit:)`` holding no thread, its answer shared by the feeds woken by one commit.
    public func fetchChanges(inChannels channels: Set<String>, since: UInt64, limit: Int?) async throws(GatewayError)
        -> [ChangeEntry]
    {
        guard !channels.isEmpty else { return [] }
        guard openTransaction == nil else { return try changes(inChannels: channels, since: since, limit: limit) }
        return try await sharedRead(channels: channels, since: since, limit: limit) { () async throws(GatewayError) in
            try await withConnection { link async throws(GatewayError) in
                var read = StableRead(since: since, limit: limit)
                while !read.isOver, let through = read.next(stable: try await stableSequence(link)) {
                    guard through > since else { continue }
                    let query = Self.channelChangesQuery(channels, since: since, through: through, limit: limit)
                    read.found(try Self.decodeChannelChanges(try await link.query(query)))
                }
                return read.entries
            }
        }
    }

    /// `query`'s answer, or one kept or under way for the same read at the same commit count
    /// (``PostgresFeedReads``) once a listener counts every node's commits.
    private func sharedRead(
        channels: Set<String>?, since: UInt64, limit: Int?,
        _ query: () async throws(GatewayError) -> [ChangeEntry]
    ) async throws(GatewayError) -> [ChangeEntry] {
        guard shared.countsEveryCommit.load(ordering: .acquiring) else { return try await query() }
        return try await shared.feedReads.read(
            channels: channels, since: since, limit: limit, commits: pool.commitCount, query)
    }

    // MARK: Statements

    private static func changesQuery(since: UInt64, through stable: UInt64, limit: Int?) -> PostgresQuery {
        """
        SELECT sequence, id, rev, deleted FROM documents
        WHERE sequence > \(Int64(clamping: since)) AND sequence <= \(Int64(clamping: stable))
        ORDER BY sequence LIMIT \(limit.map { Int64($0) })
        """
    }

    private static func decodeChanges(_ result: PostgresQueryResult) throws(GatewayError) -> [ChangeEntry] {
        var entries: [ChangeEntry] = []
        for row in result.rows {
            let (sequence, id, rev, deleted) = try PostgresLink.decode(row, as: (Int64, String, String, Bool).self)
            entries.append(
                ChangeEntry(
                    sequence: UInt64(sequence), documentID: id, revisionID: try revision(rev), isDeleted: deleted))
        }
        return entries
    }

    /// As SQLite's query: per document its rows after `since`, still in a channel when one row is not a removal.
    private static func channelChangesQuery(
        _ channels: Set<String>, since: UInt64, through stable: UInt64, limit: Int?
    ) -> PostgresQuery {
        """
        SELECT m.doc_id, max(m.sequence), bool_and(m.removed), d.rev, d.deleted,
            coalesce(array_agg(m.channel) FILTER (WHERE m.removed), '{}')
        FROM channel_changes m JOIN documents d ON d.id = m.doc_id
        WHERE m.channel = ANY(\(Array(channels))) AND m.sequence > \(Int64(clamping: since))
            AND m.sequence <= \(Int64(clamping: stable))
        GROUP BY m.doc_id, d.rev, d.deleted
        ORDER BY max(m.sequence)
        LIMIT \(limit.map { Int64($0) })
        """
    }

    private static func decodeChannelChanges(_ result: PostgresQueryResult) throws(GatewayError) -> [ChangeEntry] {
        var entries: [ChangeEntry] = []
        for row in result.rows {
            let (id, sequence, allRemoved, rev, deleted, removed) = try PostgresLink.decode(
                row, as: (String, Int64, Bool, String, Bool, [String]).self)
            entries.append(
                ChangeEntry(
                    sequence: UInt64(sequence), documentID: id, revisionID: try revision(rev),
                    isDeleted: deleted, removedFrom: allRemoved ? Set(removed) : []))
        }
        return entries
    }
}

// MARK: - StableRead

/// The rounds of a feed read up to the stable sequence, read first (the rows come in a later statement, a later
/// snapshot). A read that reaches the end (fewer entries than its limit) looks at the stable sequence again, and
/// reads again up to it if it rose: a document written meanwhile moved from below the first stable sequence to above
/// it, and would otherwise be missing from this read (a pull racing a push of the same document would end without
/// it); three rounds at most.
///
/// ```swift
/// var read = StableRead(since: since, limit: limit)
/// while !read.isOver, let through = read.next(stable: try stableSequence(link)) {
///     guard through > since else { continue }  // nothing to read yet
///     read.found(try query(since: since, through: through))
/// }
/// return read.entries
/// ```
struct StableRead {
    /// The entries of the last query.
    private(set) var entries: [ChangeEntry] = []
    private let since: UInt64
    private let limit: Int?
    /// The stable sequence of the last round.
    private var last: UInt64?
    private var rounds = 0
    private var reachedLimit = false

    init(since: UInt64, limit: Int?) {
        self.since = since
        self.limit = limit
    }

    /// Whether the read is over without reading the stable sequence again: the last query filled the limit, or
    /// three rounds were made.
    var isOver: Bool {
        reachedLimit || rounds >= 3
    }

    /// Takes the stable sequence just read; returns the sequence to read through in a new round, or nil when it did
    /// not rise since the last round: the caller stops there. A round whose range is empty (`through <= since`)
    /// reads nothing.
    mutating func next(stable now: UInt64) -> UInt64? {
        guard !isOver, last.map({ now > $0 }) ?? true else { return nil }
        rounds += 1
        last = now
        return now
    }

    /// Takes the entries the round's query found.
    mutating func found(_ entries: [ChangeEntry]) {
        self.entries = entries
        if let limit, entries.count >= limit { reachedLimit = true }
    }
}
