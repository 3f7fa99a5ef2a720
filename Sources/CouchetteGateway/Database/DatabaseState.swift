// MARK: - DatabaseState

/// The run state of a database, reported as `state` by `GET /{db}/`.
///
/// When a database is not ``online`` its endpoints answer 503, except `GET /{db}/` and a few admin endpoints
/// (spec: gateway-rest-api.md §1.5).
public enum DatabaseState: String, Sendable, Hashable {
    /// Serving requests.
    case online = "Online"
    /// Taken offline by the administrator or the `offline` config key.
    case offline = "Offline"
    /// Being brought online.
    case starting = "Starting"
    /// Being taken offline.
    case stopping = "Stopping"
    /// Re-running the sync function over all documents.
    case resyncing = "Resyncing"
}
