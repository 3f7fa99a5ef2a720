import Synchronization

// MARK: - PostgresFeedReads

/// The last answer of each feed read (`changes` after a sequence, for the same channels and limit), reused by the
/// feeds woken by the same commit instead of asking PostgreSQL once per feed.
///
/// A commit wakes every feed of a node at once, and feeds that had read as far read the same rows: 100 feeds were 100
/// queries through the pool's connections for every write (`postgres.cross-node-p99-ms` 46–59 ms on a slow day, its
/// p50 35 ms). An answer is kept with the pool's commit count (``PostgresConnectionPool/commitCount``) read before its
/// query began, and is reused only while that count is unchanged: the count goes up after each of this node's commits
/// and before each other node's notification wakes a feed, so a feed woken by a commit never takes an answer whose
/// query began before it. (Such an answer is still correct for a racing reader; it is simply not reused.)
///
/// ```swift
/// let entries = try reads.read(channels: nil, since: 41, limit: 200, commits: pool.commitCount) {
///     try queryChanges(since: 41, limit: 200)
/// }
/// ```
final class PostgresFeedReads: Sendable {
    private struct Key: Hashable {
        var channels: Set<String>?
        var since: UInt64
        var limit: Int?
    }

    /// The most channels a kept read may name: a key is hashed on every read, and a user with thousands of channels
    /// reads alone anyway.
    static let channelLimit = 64
    /// The most answers kept (a feed lagging behind adds its own): past it the memo starts over.
    static let capacity = 256

    private let answers = Mutex<[Key: (commits: UInt64, entries: [ChangeEntry])]>([:])

    /// The entries of a feed read: the kept answer when no commit came since its query began, else `query`'s.
    ///
    /// - Parameters:
    ///   - channels: The channels read (nil for every change); a set of more than ``channelLimit`` is not kept.
    ///   - commits: The commit count now, read before `query` runs.
    func read(
        channels: Set<String>?, since: UInt64, limit: Int?, commits: UInt64,
        _ query: () throws(GatewayError) -> [ChangeEntry]
    ) throws(GatewayError) -> [ChangeEntry] {
        guard (channels?.count ?? 0) <= Self.channelLimit else { return try query() }
        let key = Key(channels: channels, since: since, limit: limit)
        if let kept = answers.withLock({ $0[key] }), kept.commits == commits { return kept.entries }
        let entries = try query()
        answers.withLock { answers in
            if answers.count >= Self.capacity { answers.removeAll(keepingCapacity: true) }
            if (answers[key]?.commits ?? 0) <= commits { answers[key] = (commits, entries) }
        }
        return entries
    }
}
