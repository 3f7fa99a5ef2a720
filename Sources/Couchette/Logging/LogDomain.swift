/// The area of Couchette a log message comes from.
///
/// The console logger can be limited to some domains with ``ConsoleLogger/domains``.
///
/// ```swift
/// Database.log.console.domains = [.replicator, .network]
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public enum LogDomain: UInt8, Sendable {
    /// Storage, documents, revisions, blobs, transactions and maintenance.
    case database
    /// Views, SQL++ and query-builder queries, indexes and live queries.
    case query
    /// The replicator: checkpoints, pushes, pulls and conflicts.
    case replicator
    /// HTTP and WebSocket traffic with a remote.
    case network
    /// A listener that serves this database to peers.
    case listener

    /// The lower-case name written in log lines and used as swift-log metadata, e.g. `replicator`.
    var name: String {
        switch self {
        case .database: "database"
        case .query: "query"
        case .replicator: "replicator"
        case .network: "network"
        case .listener: "listener"
        }
    }

    /// The one-member set of ``LogDomains`` for this domain.
    var asSet: LogDomains {
        LogDomains(rawValue: 1 << Int(rawValue))
    }
}
