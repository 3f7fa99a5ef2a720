import Synchronization

// MARK: - ChangesFeedParking

/// Keeps a ``ChangesFeed`` that waits without a task: between runs, the feed and its registration with the
/// database's notifier (``ChangeNotifier/whenChanged(_:after:deadline:_:)``), and whether whoever runs it stopped.
/// ``GatewayChangeSource`` and ``DetachedChangesFeed`` run their feeds this way.
///
/// ```swift
/// guard var feed = parking.take() else { return }    // nil once stopped
/// // … run the feed until it asks to wait …
/// parking.park(feed, after: sequence, deadline: deadline) { outcome in await pump(after: outcome) }
/// parking.stop()  // the connection ended: the registration, if any, wakes with .closed
/// ```
final class ChangesFeedParking: Sendable {
    private struct State {
        /// The feed, while no task runs it.
        var feed: ChangesFeed?
        /// The notifier registration waiting for the next change.
        var registration: UInt64?
        var stopped = false
    }

    private let notifier: ChangeNotifier
    private let state: Mutex<State>
    /// Where the woken feed runs: its database's ``GatewayDatabase/executor``.
    private let executor: StorageThreads?

    /// Parking for `feed`, which is there to take.
    init(_ feed: ChangesFeed) {
        notifier = feed.notifier
        executor = feed.reader.database.executor
        state = Mutex(State(feed: feed))
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool {
        state.withLock(\.stopped)
    }

    /// The feed, to run; nil once stopped (or while another run holds it).
    func take() -> ChangesFeed? {
        state.withLock { $0.stopped ? nil : $0.feed.take() }
    }

    /// Keeps `feed` and registers with the notifier to run `next` in a task of its own once the database passes
    /// `sequence`, `deadline` passes, the notifier closes or ``stop()`` comes. The task is detached: the writer whose
    /// commit wakes the feed has its own task locals, which the run does not need.
    func park(
        _ feed: ChangesFeed, after sequence: UInt64, deadline: ContinuousClock.Instant?,
        next: @escaping @Sendable (ChangeNotifier.WaitOutcome) async -> Void
    ) {
        let id = notifier.newWaiterID()
        state.withLock { state in
            state.feed = feed
            state.registration = id
        }
        notifier.whenChanged(id, after: sequence, deadline: deadline) { [self] outcome in
            state.withLock { state in
                if state.registration == id { state.registration = nil }
            }
            Task.detached(executorPreference: executor) { await next(outcome) }
        }
        // A stop() that came before the registration found nothing to cancel.
        if isStopped { notifier.cancelWait(id) }
    }

    /// No more runs: a registration waiting is cancelled (its `wake` gets `.closed`).
    func stop() {
        let registration = state.withLock { state in
            state.stopped = true
            return state.registration.take()
        }
        if let registration { notifier.cancelWait(registration) }
    }
}
