import Foundation
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
/// Feeds woken together run at once, so a read whose query is under way is joined as well (single flight): the
/// feeds that find it wait for its answer, holding no thread, instead of each asking PostgreSQL (32 concurrent misses
/// made the same p99 108–120 ms). The same argument holds for a joiner: it holds the same commit count, read before it
/// asked, so every commit it must see was counted before the query began.
///
/// ```swift
/// let entries = try await reads.read(channels: nil, since: 41, limit: 200, commits: pool.commitCount) {
///     try await queryChanges(since: 41, limit: 200)
/// }
/// ```
final class PostgresFeedReads: Sendable {
    private struct Key: Hashable {
        var channels: Set<String>?
        var since: UInt64
        var limit: Int?
    }

    /// A read's answer, or the query under way that will give it; both with the commit count read before the query.
    private enum Kept {
        case answer(commits: UInt64, entries: [ChangeEntry])
        case flight(commits: UInt64, Flight)

        var commits: UInt64 {
            switch self {
            case .answer(let commits, _), .flight(let commits, _): commits
            }
        }
    }

    /// A query under way, which readers of the same key and commit count await.
    private final class Flight: Sendable {
        typealias Outcome = Result<[ChangeEntry], GatewayError>

        private struct State {
            var outcome: Outcome?
            var waiters: [CheckedContinuation<Outcome, Never>] = []
        }

        private let state = Mutex(State())

        func finish(_ outcome: Outcome) {
            let waiters = state.withLock { state in
                state.outcome = outcome
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: outcome) }
        }

        /// The query's outcome, once it has one; `waiting` is called if the caller has to wait for it. Not
        /// cancellable: the query ends within its connection's deadline.
        func outcome(waiting: (@Sendable () -> Void)?) async -> Outcome {
            await withCheckedContinuation { waiter in
                let known = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.waiters.append(waiter)
                    return nil
                }
                if let known { waiter.resume(returning: known) } else { waiting?() }
            }
        }
    }

    /// What a reader does: take a kept answer, wait for a query under way, or run its own.
    private enum Step {
        case take([ChangeEntry])
        case join(Flight)
        case run(Flight)
    }

    /// The most channels a kept read may name: a key is hashed on every read, and a user with thousands of channels
    /// reads alone anyway.
    static let channelLimit = 64
    /// The most answers kept (a feed lagging behind adds its own): past it the memo starts over.
    static let capacity = 256

    private let kept = Mutex<[Key: Kept]>([:])
    /// Called each time a reader waits for a query under way (for tests).
    private let joined: (@Sendable () -> Void)?

    /// - Parameter joined: Called each time a reader waits for a query under way (for tests).
    init(joined: (@Sendable () -> Void)? = nil) {
        self.joined = joined
    }

    /// The entries of a feed read: the kept answer when no commit came since its query began, that of the same query
    /// under way, else `query`'s.
    ///
    /// - Parameters:
    ///   - channels: The channels read (nil for every change); a set of more than ``channelLimit`` is not kept.
    ///   - limit: The most entries read; a read without a limit (a user's `_all_docs`, not a feed's page) is not
    ///     kept, so the memo never holds whole channels.
    ///   - commits: The commit count now, read before `query` runs.
    func read(
        channels: Set<String>?, since: UInt64, limit: Int?, commits: UInt64,
        _ query: () async throws(GatewayError) -> [ChangeEntry]
    ) async throws(GatewayError) -> [ChangeEntry] {
        guard limit != nil, (channels?.count ?? 0) <= Self.channelLimit else { return try await query() }
        let key = Key(channels: channels, since: since, limit: limit)
        let step = kept.withLock { kept -> Step in
            switch kept[key] {
            case .answer(let keptCommits, let entries)? where keptCommits == commits: return .take(entries)
            case .flight(let keptCommits, let flight)? where keptCommits == commits: return .join(flight)
            default:
                let flight = Flight()
                if kept.count >= Self.capacity { kept.removeAll(keepingCapacity: true) }
                if (kept[key]?.commits ?? 0) <= commits { kept[key] = .flight(commits: commits, flight) }
                return .run(flight)
            }
        }
        switch step {
        case .take(let entries):
            return entries
        case .join(let flight):
            return try await flight.outcome(waiting: joined).get()
        case .run(let flight):
            let result: Result<[ChangeEntry], GatewayError>
            do throws(GatewayError) {
                result = .success(try await query())
            } catch {
                result = .failure(error)
            }
            flight.finish(result)
            kept.withLock { kept in
                guard case .flight(let keptCommits, let keptFlight)? = kept[key], keptFlight === flight else { return }
                if case .success(let entries) = result {
                    kept[key] = .answer(commits: keptCommits, entries: entries)
                } else {
                    kept[key] = nil
                }
            }
            return try result.get()
        }
    }
}
