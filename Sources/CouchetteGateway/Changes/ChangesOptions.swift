// MARK: - ChangesOptions

/// The parsed parameters of one `_changes` request (spec: gateway-rest-api.md §11.1).
///
/// Built from the query (GET), the JSON body merged under the query (POST) or the first WebSocket message by
/// ``init(parameters:limits:)``; parsing lives in `ChangesOptions+Parsing.swift`.
///
/// ```swift
/// let options = try ChangesOptions(parameters: ["feed": "longpoll", "since": "12", "heartbeat": "30000"])
/// options.feed       // .longpoll
/// options.since      // 12
/// options.heartbeat  // .seconds(30)
/// options.timeout    // nil: not used when a heartbeat is set
/// ```
public struct ChangesOptions: Sendable, Hashable {
    // MARK: - Properties

    /// How entries are delivered.
    public var feed: ChangesFeedType

    /// The position to start after: a sequence, or a backfill position `N:S` to resume (``ChangeSequence``).
    public var since: ChangeSequence

    /// The most entries to send; nil for no limit (`limit=0` too).
    public var limit: Int?

    /// `style=all_docs`: list every leaf revision, not only the winner.
    public var includeAllLeaves: Bool

    /// `include_docs`: add each winner's body as the caller may see it.
    public var includeDocs: Bool

    /// `conflicts=true` (CouchDB): with ``includeDocs``, each body lists its `_conflicts`.
    public var includeConflicts = false

    /// `attachments=true` (CouchDB): with ``includeDocs``, attachment bodies inline as base64 `data`, not stubs.
    public var includeAttachments = false

    /// `active_only`: drop deletions and removals.
    public var activeOnly: Bool

    /// The `filter` with its `channels` or `doc_ids`.
    public var filter: ChangesFilter

    /// The interval of keep-alive heartbeats; nil for none.
    public var heartbeat: Duration?

    /// How long a feed may stay idle before it ends; nil for never. Not used when a heartbeat is set.
    public var timeout: Duration?

    /// `accept_encoding=gzip` (WebSocket feeds only): compress messages into one gzip stream.
    public var gzip: Bool

    /// `descending=true` (CouchDB, `feed=normal` only): every document's latest change, newest first; `since` is
    /// not read, as in CouchDB, and `limit` keeps the newest.
    public var descending = false

    /// `seq_interval=N` (CouchDB): only every Nth entry of a normal or longpoll response, and its last, carries
    /// its `seq`; the others have `"seq": null`. Clients that replicate in batches read `last_seq` only.
    public var sequenceInterval: Int?

    /// `revocations=true` (Sync Gateway 3): a user's feed also says which documents the user lost access to by
    /// losing a channel (``ChangesRow/revoked(_:revision:sequence:)``), so the client can purge them.
    public var revocations = false

    // MARK: - Initialiser

    /// Creates options; the defaults are those of a request without parameters.
    public init(
        feed: ChangesFeedType = .normal, since: ChangeSequence = 0, limit: Int? = nil,
        includeAllLeaves: Bool = false, includeDocs: Bool = false, activeOnly: Bool = false,
        filter: ChangesFilter = .none, heartbeat: Duration? = nil,
        timeout: Duration? = ChangesOptions.defaultTimeout, gzip: Bool = false
    ) {
        self.feed = feed
        self.since = since
        self.limit = limit
        self.includeAllLeaves = includeAllLeaves
        self.includeDocs = includeDocs
        self.activeOnly = activeOnly
        self.filter = filter
        self.heartbeat = heartbeat
        self.timeout = timeout
        self.gzip = gzip
    }

    // MARK: - Constants

    /// The default `timeout`: 300 000 ms.
    public static let defaultTimeout = Duration.milliseconds(300_000)

    /// The largest `timeout`: 900 000 ms.
    public static let maximumTimeout = Duration.milliseconds(900_000)

    /// The smallest non-zero `heartbeat`: 25 000 ms (smaller ones are raised to it).
    public static let minimumHeartbeat = Duration.milliseconds(25_000)
}

// MARK: - ChangesOptions.Limits

extension ChangesOptions {
    /// Server-side bounds applied while parsing: the heartbeat floor and the configured `MaxHeartbeat`.
    public struct Limits: Sendable, Hashable {
        /// Non-zero heartbeats below this are raised to it (25 s; tests lower it).
        public var minimumHeartbeat: Duration

        /// Heartbeats above this are lowered to it (`MaxHeartbeat`); nil for no cap.
        public var maximumHeartbeat: Duration?

        /// Creates limits.
        public init(
            minimumHeartbeat: Duration = ChangesOptions.minimumHeartbeat, maximumHeartbeat: Duration? = nil
        ) {
            self.minimumHeartbeat = minimumHeartbeat
            self.maximumHeartbeat = maximumHeartbeat
        }
    }
}
