// MARK: - LogKeys

/// The set of enabled Sync Gateway log keys (`"log": ["HTTP", "Auth"]`).
///
/// Matching is case-insensitive; `"*"` enables every key and `"KEY+"` (verbose) implies `"KEY"`.
///
/// ```swift
/// let keys = LogKeys(["HTTP+", "auth"])
/// keys.contains(LogKeys.http)  // true
/// keys.contains("Auth")        // true
/// keys.contains("CRUD")        // false
/// ```
public struct LogKeys: Sendable, Equatable {
    // MARK: - Well-known keys

    /// One line per HTTP request: method, path, status.
    public static let http = "HTTP"
    /// Verbose HTTP logging.
    public static let httpVerbose = "HTTP+"
    /// Authentication events.
    public static let auth = "Auth"
    /// Document writes.
    public static let crud = "CRUD"
    /// Changes feeds.
    public static let changes = "Changes"
    /// Channel access grants.
    public static let access = "Access"
    /// BLIP sync connections' requests (subscriptions, checkpoints, proposals), as Sync Gateway's `SyncMsg`.
    public static let syncMessages = "SyncMsg"
    /// BLIP sync connections' batches of revisions, as Sync Gateway's `Sync`.
    public static let sync = "Sync"
    /// The sync function's `console.log` lines.
    public static let javascript = "Javascript"

    // MARK: - Properties

    /// The enabled keys, lower-cased.
    private let keys: Set<String>

    // MARK: - Initialiser

    /// Creates a set from the configuration's key names.
    public init(_ keys: [String] = []) {
        var set = Set<String>()
        for key in keys {
            let lower = key.lowercased()
            set.insert(lower)
            if lower.hasSuffix("+") { set.insert(String(lower.dropLast())) }
        }
        self.keys = set
    }

    // MARK: - Queries

    /// Whether `key` is enabled.
    public func contains(_ key: String) -> Bool {
        keys.contains("*") || keys.contains(key.lowercased())
    }

    /// Whether no key is enabled.
    public var isEmpty: Bool { keys.isEmpty }
}
