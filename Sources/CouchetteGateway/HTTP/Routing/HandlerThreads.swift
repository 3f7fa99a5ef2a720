import Foundation

// MARK: - HandlerThreads

/// Which threads a request's handler runs on: a remote database's own ``StorageThreads`` for a request naming it,
/// Swift's cooperative threads for one naming a database kept in this process (in memory or SQLite), and for the
/// rest (server-wide endpoints, names of no database) the shared storage threads while some database is remote, the
/// cooperative ones otherwise. Requests to a database kept in the process thus do not queue with the ones waiting on
/// the network, nor the requests of one remote database with those of another. The choice follows databases made and
/// deleted at run time (``DatabasePlacements``).
///
/// ```swift
/// let threads = HandlerThreads(placements: registry.placements)
/// threads.executor(forPath: "/todo/doc1")  // nil: `todo` is in SQLite
/// threads.executor(forPath: "/far/doc1")   // the threads of `far`, which is in PostgreSQL
/// ```
struct HandlerThreads: Sendable {
    /// Where each database served is.
    let placements: DatabasePlacements

    /// The executor for a request to `path`: nil for the cooperative threads.
    func executor(forPath path: String) -> StorageThreads? {
        let segment = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first.map(String.init)
        let name = segment.flatMap { $0.removingPercentEncoding } ?? ""
        switch placements.placement(of: name) {
        case .inProcess: return nil
        case .remote(let threads): return threads
        case nil: return placements.anyRemote ? StorageThreads.shared : nil
        }
    }

    /// Runs `body` on the threads for `path`.
    func run<T>(forPath path: String, _ body: () async throws -> T) async throws -> T {
        guard let executor = executor(forPath: path) else { return try await body() }
        return try await withTaskExecutorPreference(executor) { try await body() }
    }
}
