import Foundation

// MARK: - HandlerThreads

/// Which threads a request's handler runs on: a remote database's own ``StorageThreads`` for a request naming it,
/// the shared ones for a request that may reach a storage that blocks for long otherwise (server-wide endpoints, a
/// database made since the start), Swift's cooperative threads for one that names a database kept in this process
/// (in memory or SQLite), so that those requests do not queue with the ones waiting on the network, nor the requests
/// of one remote database with those of another.
///
/// ```swift
/// let threads = HandlerThreads(config: config)
/// threads.executor(forPath: "/todo/doc1")  // nil: `todo` is in SQLite
/// threads.executor(forPath: "/far/doc1")   // StorageThreads.forDatabase("far"): `far` is in PostgreSQL
/// ```
struct HandlerThreads: Sendable {
    /// The storage threads, when some database is remote; nil when every request stays on the cooperative threads.
    let storageThreads: StorageThreads?
    /// The databases configured at start that are kept in this process.
    private let localDatabases: Set<String>
    /// The databases configured at start that are remote.
    private let remoteDatabases: Set<String>

    /// The choice for a gateway serving `config`'s databases.
    init(config: GatewayConfig) {
        let remote = config.databases.values.contains(where: \.server.isRemote)
        storageThreads = remote ? StorageThreads.shared : nil
        localDatabases = Set(config.databases.filter { !$0.value.server.isRemote }.keys)
        remoteDatabases = Set(config.databases.filter { $0.value.server.isRemote }.keys)
    }

    /// The executor for a request to `path`: nil (the cooperative threads) when no database configured at the start
    /// is remote, or when the path's first segment names a local one; a remote database's own threads for a path
    /// naming it; otherwise the shared storage threads (a database made since the start, server-wide endpoints that
    /// may read every database). A gateway
    /// started with only local databases keeps every request on the cooperative threads, even for a PostgreSQL
    /// database created later through the admin API.
    func executor(forPath path: String) -> StorageThreads? {
        guard let storageThreads else { return nil }
        let segment = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first.map(String.init)
        let name = segment.flatMap { $0.removingPercentEncoding } ?? ""
        if localDatabases.contains(name) { return nil }
        return remoteDatabases.contains(name) ? StorageThreads.forDatabase(name) : storageThreads
    }

    /// Runs `body` on the threads for `path`.
    func run<T>(forPath path: String, _ body: () async throws -> T) async throws -> T {
        guard let executor = executor(forPath: path) else { return try await body() }
        return try await withTaskExecutorPreference(executor) { try await body() }
    }
}
