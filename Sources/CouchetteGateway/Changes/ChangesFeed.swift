// MARK: - ChangesFeed

/// The life of one `_changes` feed, as a sequence of events: entries as they become visible, heartbeats while
/// idle, and the end (spec: gateway-rest-api.md §11.2, §11.3).
///
/// Each ``next()`` reads from the ``ChangesReader``; once caught up, it waits on the database's
/// ``ChangeNotifier`` against the heartbeat or timeout deadline:
///
/// - `normal` ends when caught up;
/// - `longpoll` ends once it has sent something and is caught up, or on timeout;
/// - `continuous` and `websocket` report ``Event/caughtUp`` once, then keep waiting; they end on timeout, when
///   `limit` entries were sent, when the notifier closes (database offline, server shutdown) or when the task is
///   cancelled.
///
/// ```swift
/// var feed = ChangesFeed(reader: reader, notifier: database.changeNotifier)
/// while let event = try await feed.next() {
///     switch event {
///     case .entries(let rows): send(rows)
///     case .heartbeat: send("\n")
///     case .caughtUp: break
///     }
/// }
/// ```
public struct ChangesFeed: Sendable {
    // MARK: - Event

    /// What a feed has to say next.
    public enum Event: Sendable, Hashable {
        /// New entries, in sequence order (never empty).
        case entries([ChangesRow])
        /// The feed has sent everything there was (streaming feeds, once).
        case caughtUp
        /// Nothing happened for a heartbeat interval.
        case heartbeat
    }

    // MARK: - Properties

    /// Reads the entries.
    public let reader: ChangesReader

    /// Wakes the feed when the database changes.
    public let notifier: ChangeNotifier

    /// The sequence of the last entry sent, else the request's `since` (`last_seq`).
    public private(set) var lastSequence: UInt64

    /// How many entries were sent.
    public private(set) var sentCount = 0

    private var options: ChangesOptions { reader.options }
    private var position: UInt64
    private var needsRead = true
    private var reportedCaughtUp = false
    private var lastActivity: ContinuousClock.Instant
    private var finished = false

    // MARK: - Initialiser

    /// Creates a feed starting after the reader's `since`.
    public init(reader: ChangesReader, notifier: ChangeNotifier) {
        self.reader = reader
        self.notifier = notifier
        self.position = reader.options.since
        self.lastSequence = reader.options.since
        self.lastActivity = .now
    }

    // MARK: - Events

    /// The next event, or nil when the feed is over.
    ///
    /// - Throws: ``GatewayError`` from the storage; the feed is over after it.
    public mutating func next() async throws(GatewayError) -> Event? {
        while !finished {
            if let limit = options.limit, sentCount >= limit { break }
            if options.feed != .normal, notifier.isClosed { break }
            if needsRead {
                let snapshot = notifier.lastSequence
                let batch: ChangesReader.Batch
                do {
                    batch = try reader.read(after: position, limit: options.limit.map { $0 - sentCount })
                } catch {
                    finished = true
                    throw error
                }
                position = batch.position
                if batch.isExhausted {
                    // Everything up to the snapshot was committed before the read, so nothing before it is missed.
                    position = max(position, snapshot)
                    needsRead = false
                }
                if let last = batch.rows.last {
                    sentCount += batch.rows.count
                    lastSequence = last.sequence
                    lastActivity = .now
                    return .entries(batch.rows)
                }
                continue
            }
            switch options.feed {
            case .normal:
                finished = true
            case .longpoll:
                if sentCount > 0 { finished = true }
            case .continuous, .websocket:
                if !reportedCaughtUp {
                    reportedCaughtUp = true
                    return .caughtUp
                }
            }
            if finished { break }
            switch await notifier.wait(after: position, deadline: deadline) {
            case .changed:
                needsRead = true
            case .deadline where options.heartbeat != nil:
                lastActivity = .now
                return .heartbeat
            case .deadline, .closed:
                finished = true
            }
        }
        finished = true
        return nil
    }

    /// When the idle feed next sends a heartbeat or times out; nil for never.
    private var deadline: ContinuousClock.Instant? {
        if let heartbeat = options.heartbeat { return lastActivity + heartbeat }
        if let timeout = options.timeout { return lastActivity + timeout }
        return nil
    }
}
