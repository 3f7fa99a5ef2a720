import Foundation

/// Keeps a query's result current: runs it once when started, then again after commits that change the collections
/// it reads, and tells its listeners when the result differs from the previous one. Commits arriving while a run is
/// pending or in progress coalesce into one more run; runs are at least `minimumInterval` apart. Ends (its listeners
/// hear `nil`) when the database closes.
///
/// Shared by view live queries (``LiveQuery``) and SQL++ live queries.
final class QueryObserver<Value: Sendable>: @unchecked Sendable {
    /// What listeners receive: a new result, an error, or the end.
    enum Event: Sendable {
        case result(Value)
        case failure(CouchetteError)
        case ended
    }

    private let database: Database
    private let collectionIDs: [Int64]
    private let run: @Sendable () throws -> Value
    private let isSame: @Sendable (Value, Value) -> Bool
    private let queue = DispatchQueue(label: "couchette.live-query")

    // State, touched only on `queue`.
    private var minimumInterval: TimeInterval
    private var tokens: [ListenerToken] = []
    private var started = false
    private var ended = false
    private var pending = false
    private var lastRun: DispatchTime?
    private var latest: Value?
    private var latestError: CouchetteError?
    private var listeners: [UInt64: @Sendable (Event) -> Void] = [:]
    private var nextListenerID: UInt64 = 1

    init(
        database: Database, collectionIDs: [Int64], minimumInterval: TimeInterval,
        run: @escaping @Sendable () throws -> Value, isSame: @escaping @Sendable (Value, Value) -> Bool
    ) {
        self.database = database
        self.collectionIDs = collectionIDs
        self.minimumInterval = minimumInterval
        self.run = run
        self.isSame = isSame
    }

    deinit {
        // No listener can hear it any more: stop listening to commits.
        for token in tokens { token.remove() }
    }

    /// The last result, or nil before the first run ends.
    var result: Value? { queue.sync { latest } }

    /// The error of the last run, if it failed.
    var error: CouchetteError? { queue.sync { latestError } }

    /// The least time between two runs.
    var interval: TimeInterval {
        get { queue.sync { minimumInterval } }
        set { queue.async { self.minimumInterval = max(0, newValue) } }
    }

    /// Starts observing (and runs the query); does nothing when started.
    func start() {
        queue.async { self.startOnQueue() }
    }

    /// Stops observing; the last result is kept.
    func stop() {
        queue.async {
            self.started = false
            for token in self.tokens { token.remove() }
            self.tokens.removeAll()
        }
    }

    /// Runs the query again now (its options changed).
    func rerun() {
        queue.async {
            guard self.started else { return }
            self.runNow(force: true)
        }
    }

    /// Adds a listener; when `replayLatest`, it hears the current result (if any) first. Starts observing.
    func addListener(replayLatest: Bool, _ listener: @escaping @Sendable (Event) -> Void) -> ListenerToken {
        let id: UInt64 = queue.sync {
            let id = nextListenerID
            nextListenerID += 1
            listeners[id] = listener
            if replayLatest, let latest { listener(.result(latest)) }
            if ended { listener(.ended) }
            return id
        }
        start()
        return ListenerToken(id: id) { [weak self] id in
            guard let self else { return }
            self.queue.async { self.listeners[id] = nil }
        }
    }

    // MARK: - On the queue

    private func startOnQueue() {
        guard !started, !ended else { return }
        started = true
        for collectionID in collectionIDs {
            tokens.append(
                database.notifier.addCollectionListener(
                    collectionID: collectionID, queue: queue, onClose: { [weak self] in self?.end() }
                ) { [weak self] _ in self?.changed() })
        }
        runNow(force: false)
    }

    /// A commit changed a collection: run again, at once or when the interval has passed; once for a burst.
    private func changed() {
        guard started, !pending else { return }
        pending = true
        let earliest = (lastRun ?? .now()) + minimumInterval
        queue.asyncAfter(deadline: max(earliest, .now())) { [weak self] in
            guard let self else { return }
            self.pending = false
            guard self.started else { return }
            self.runNow(force: false)
        }
    }

    private func runNow(force: Bool) {
        lastRun = .now()
        do {
            let value = try run()
            latestError = nil
            if !force, let latest, isSame(latest, value) { return }
            latest = value
            for listener in listeners.values { listener(.result(value)) }
        } catch {
            let failure = CouchetteError.wrap(error)
            latestError = failure
            if failure.code == .notOpen { return end() }
            for listener in listeners.values { listener(.failure(failure)) }
        }
    }

    private func end() {
        guard !ended else { return }
        ended = true
        started = false
        for token in tokens { token.remove() }
        tokens.removeAll()
        for listener in listeners.values { listener(.ended) }
    }
}
