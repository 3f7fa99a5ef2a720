import Synchronization

// MARK: - DatabasePlacements

/// Where each database a registry serves keeps its data, by name, readable without waiting for the registry's actor:
/// a request chooses its threads (``HandlerThreads``) before its handler runs, for databases made and deleted at run
/// time as for those of the configuration.
///
/// ```swift
/// placements.set(.remote(threads), forDatabase: "far")
/// placements.placement(of: "far")   // .remote(threads)
/// placements.placement(of: "nope")  // nil
/// ```
final class DatabasePlacements: Sendable {
    /// Where a database's data is, as a request's threads care.
    enum Placement: Sendable {
        /// In memory or in SQLite files of this process: its calls do not wait on a network.
        case inProcess
        /// Across a network (PostgreSQL), with the threads its blocking calls run on.
        case remote(StorageThreads)
    }

    private let placements = Mutex<[String: Placement]>([:])

    /// Records where database `name` is.
    func set(_ placement: Placement, forDatabase name: String) {
        placements.withLock { $0[name] = placement }
    }

    /// Forgets database `name` (deleted).
    func remove(_ name: String) {
        placements.withLock { $0[name] = nil }
    }

    /// Where database `name` is, or nil for a name no database has.
    func placement(of name: String) -> Placement? {
        placements.withLock { $0[name] }
    }

    /// Whether some database served is remote.
    var anyRemote: Bool {
        placements.withLock { placements in
            placements.values.contains { if case .remote = $0 { true } else { false } }
        }
    }
}

extension DatabasePlacements.Placement {
    /// Where `database` is.
    init(_ database: GatewayDatabase) {
        self = database.executor.map(Self.remote) ?? .inProcess
    }
}
