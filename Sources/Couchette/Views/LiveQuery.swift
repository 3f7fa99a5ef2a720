import Foundation

/// A view or all-documents query kept up to date (Couchbase Lite 1.x's `CBLLiveQuery`): once started it runs the
/// query, then again after commits (local or replicated) to its collection, and tells its listeners whenever the
/// rows change. A burst of commits makes one re-run; re-runs are at least ``updateInterval`` apart.
///
/// ```swift
/// let conflicts = try db.createAllDocumentsQuery().asLive()
/// conflicts.allDocsMode = .onlyConflicts                  // options forward to `query`
/// let token = conflicts.addChangeListener { rows in for row in rows { resolve(row.conflictingRevisions ?? []) } }
/// conflicts.start()
/// ```
///
/// It stops when the database closes (streams from ``changes()`` end then).
@dynamicMemberLookup
public final class LiveQuery: @unchecked Sendable {
    /// The options, shared with the observer's runs.
    private final class Options: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: ViewQuery
        init(_ query: ViewQuery) { stored = query }
        var query: ViewQuery {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    private let options: Options
    private let observer: QueryObserver<QueryEnumerator>

    init(query: ViewQuery) {
        let options = Options(query)
        self.options = options
        let collection = query.collection
        observer = QueryObserver(
            database: collection.database, collectionIDs: [collection.id], minimumInterval: 0.2,
            run: { try options.query.run() }, isSame: { $0.hasSameRows(as: $1) })
    }

    /// The query's options; setting them runs it again when started.
    public var query: ViewQuery {
        get { options.query }
        set {
            options.query = newValue
            observer.rerun()
        }
    }

    /// Reads and sets the query's options: `live.groupLevel = 1`.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<ViewQuery, T>) -> T {
        get { query[keyPath: keyPath] }
        set { query[keyPath: keyPath] = newValue }
    }

    /// The least time between two runs, in seconds (0.2 by default).
    public var updateInterval: TimeInterval {
        get { observer.interval }
        set { observer.interval = newValue }
    }

    /// The latest rows; nil until the first run ends.
    public var rows: QueryEnumerator? { observer.result }

    /// The error of the latest run, if it failed.
    public var lastError: CouchetteError? { observer.error }

    /// Starts observing and runs the query; does nothing when started.
    public func start() { observer.start() }

    /// Stops observing; ``rows`` keeps the last result.
    public func stop() { observer.stop() }

    /// Runs the query again (a 1.x leftover: setting an option does it already).
    public func queryOptionsChanged() { observer.rerun() }

    /// The rows, waiting for the first run when needed (and starting the query).
    ///
    /// - Throws: The first run's error; `.notOpen` when the database closed first.
    public func waitForRows() async throws -> QueryEnumerator {
        if let rows { return rows }
        for try await rows in changes(startingNow: true) { return rows }
        throw CouchetteError(.notOpen, message: "The database closed before the live query ran")
    }

    /// Calls `listener` with the rows after each run that changed them (the first run included), each listener
    /// with an enumerator of its own. Starts the query.
    ///
    /// - Parameter queue: Where to call it; a private serial queue when nil.
    @discardableResult
    public func addChangeListener(
        withQueue queue: DispatchQueue? = nil, _ listener: @escaping @Sendable (QueryEnumerator) -> Void
    ) -> ListenerToken {
        let target = ListenerQueue.resolve(queue)
        return observer.addListener(replayLatest: true) { event in
            if case .result(let rows) = event {
                let own = rows.withOwnCursor()
                target.async { listener(own) }
            }
        }
    }

    /// The rows now (once the first run ends), then after each change; ends when the database closes or the task
    /// iterating it is cancelled, and throws a run's error. The stream keeps the live query running while it is
    /// iterated, and lets it go when the consumer stops or is cancelled.
    public func changes() -> AsyncThrowingStream<QueryEnumerator, any Error> {
        changes(startingNow: true)
    }

    func changes(startingNow: Bool) -> AsyncThrowingStream<QueryEnumerator, any Error> {
        AsyncThrowingStream { continuation in
            let token = observer.addListener(replayLatest: startingNow) { event in
                switch event {
                case .result(let rows): continuation.yield(rows.withOwnCursor())
                case .failure(let error): continuation.finish(throwing: error)
                case .ended: continuation.finish()
                }
            }
            continuation.onTermination = { _ in
                token.remove()
                withExtendedLifetime(self) {}
            }
        }
    }
}
