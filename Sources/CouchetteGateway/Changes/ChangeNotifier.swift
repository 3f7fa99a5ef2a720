import Synchronization

// MARK: - ChangeNotifier

/// Wakes `_changes` feeds when a database's sequence advances: the one place writes announce themselves.
///
/// Writers call ``notify(_:)`` after each committed change; feeds wait with ``wait(after:deadline:)``, which returns
/// as soon as the last sequence exceeds theirs, or when their deadline (next heartbeat, timeout) passes.
/// ``close()`` (database offline, server shutdown) wakes every waiter with ``WaitOutcome/closed`` and makes later
/// waits return at once, until ``reopen()``.
///
/// ```swift
/// let notifier = ChangeNotifier(sequence: 0)
/// Task { notifier.notify(1) }
/// await notifier.wait(after: 0, deadline: .now + .seconds(25))  // .changed(1)
/// ```
///
/// Deadlines cost no task per wait: one timer task per notifier sleeps until the earliest deadline among the
/// waiters, so a thousand idle feeds woken by every write re-register in constant time. A feed that should hold no
/// task at all while idle (a BLIP subscription) registers a wake-up callback instead
/// (``whenChanged(_:after:deadline:_:)``).
public final class ChangeNotifier: Sendable {
    // MARK: - WaitOutcome

    /// How a wait ended.
    public enum WaitOutcome: Sendable, Hashable {
        /// The last sequence passed the one waited after; it is now this.
        case changed(UInt64)
        /// The deadline passed first.
        case deadline
        /// The notifier was closed (database offline, server shutdown) or the task was cancelled.
        case closed
    }

    // MARK: - State

    private struct Waiter {
        let after: UInt64
        let deadline: ContinuousClock.Instant?
        let wake: @Sendable (WaitOutcome) -> Void
    }

    /// The task sleeping until the earliest deadline; a new generation replaces it when an earlier one comes.
    private struct DeadlineTimer {
        let generation: UInt64
        var target: ContinuousClock.Instant
        let task: Task<Void, Never>
    }

    private struct State {
        var sequence: UInt64
        var closed = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var timer: DeadlineTimer?
        var timerGeneration: UInt64 = 0
    }

    private let state: Mutex<State>

    // MARK: - Initialiser

    /// Creates a notifier starting at `sequence` (the storage's last sequence).
    public init(sequence: UInt64) {
        state = Mutex(State(sequence: sequence))
    }

    deinit {
        state.withLock { $0.timer?.task.cancel() }
    }

    // MARK: - Reading

    /// The last sequence announced.
    public var lastSequence: UInt64 {
        state.withLock { $0.sequence }
    }

    /// Whether the notifier is closed.
    public var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// How many feeds are waiting.
    public var waiterCount: Int {
        state.withLock { $0.waiters.count }
    }

    // MARK: - Announcing

    /// Announces that `sequence` was committed, waking every waiter it concerns. Older sequences are ignored.
    public func notify(_ sequence: UInt64) {
        let woken: [@Sendable (WaitOutcome) -> Void] = state.withLock { state in
            guard sequence > state.sequence else { return [] }
            state.sequence = sequence
            var woken: [@Sendable (WaitOutcome) -> Void] = []
            for (id, waiter) in state.waiters where waiter.after < sequence {
                woken.append(waiter.wake)
                state.waiters[id] = nil
            }
            return woken
        }
        for wake in woken { wake(.changed(sequence)) }
    }

    /// Wakes every waiter with ``WaitOutcome/closed``; later waits return at once until ``reopen()``.
    public func close() {
        let woken = state.withLock { state in
            state.closed = true
            let woken = state.waiters.values.map(\.wake)
            state.waiters = [:]
            state.timer?.task.cancel()
            state.timer = nil
            return woken
        }
        for wake in woken { wake(.closed) }
    }

    /// Lets waits block again after ``close()``.
    public func reopen() {
        state.withLock { $0.closed = false }
    }

    // MARK: - Waiting

    /// Waits until the last sequence exceeds `sequence`, or until `deadline`.
    ///
    /// ```swift
    /// switch await notifier.wait(after: position, deadline: .now + .seconds(25)) {
    /// case .changed: // read the new entries
    /// case .deadline: // write a heartbeat
    /// case .closed: // end the feed
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The sequence already seen.
    ///   - deadline: When to give up; nil to wait without one.
    /// - Returns: ``WaitOutcome/closed`` also when the task is cancelled.
    public func wait(after sequence: UInt64, deadline: ContinuousClock.Instant?) async -> WaitOutcome {
        let id = newWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome, Never>) in
                // Cancellation is checked under the lock: a cancel before the registration finds nothing to end.
                register(id, after: sequence, deadline: deadline, unlessCancelled: true) {
                    continuation.resume(returning: $0)
                }
            }
        } onCancel: {
            cancelWait(id)
        }
    }

    /// Calls `wake` once — from whichever thread announces the change, closes the notifier or passes the deadline,
    /// or at once when it already happened — with what ``wait(after:deadline:)`` would return, without a task waiting
    /// meanwhile: an idle feed then costs its registration only. `wake` should only schedule work (start a task).
    ///
    /// ```swift
    /// let id = notifier.newWaiterID()
    /// notifier.whenChanged(id, after: position, deadline: nil) { outcome in Task { await sendChanges(after: outcome) } }
    /// notifier.cancelWait(id)  // when the feed's connection ends: `wake` gets .closed, if it has not run yet
    /// ```
    ///
    /// - Parameters:
    ///   - id: A number from ``newWaiterID()`` naming the registration, for ``cancelWait(_:)``.
    ///   - sequence: The sequence already seen.
    ///   - deadline: When to give up; nil to wait without one.
    ///   - wake: Called once with the outcome.
    public func whenChanged(
        _ id: UInt64, after sequence: UInt64, deadline: ContinuousClock.Instant?,
        _ wake: @escaping @Sendable (WaitOutcome) -> Void
    ) {
        register(id, after: sequence, deadline: deadline, unlessCancelled: false, wake)
    }

    private func register(
        _ id: UInt64, after sequence: UInt64, deadline: ContinuousClock.Instant?, unlessCancelled: Bool,
        _ wake: @escaping @Sendable (WaitOutcome) -> Void
    ) {
        let immediate: WaitOutcome? = state.withLock { state in
            if state.closed || (unlessCancelled && Task.isCancelled) { return .closed }
            if state.sequence > sequence { return .changed(state.sequence) }
            if let deadline, deadline <= .now { return .deadline }
            state.waiters[id] = Waiter(after: sequence, deadline: deadline, wake: wake)
            if let deadline { armTimer(&state, for: deadline) }
            return nil
        }
        if let immediate { wake(immediate) }
    }

    /// A number naming a registration of ``whenChanged(_:after:deadline:_:)``, unique for this notifier.
    public func newWaiterID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Ends the registration `id` with ``WaitOutcome/closed``, if it is still waiting; does nothing otherwise.
    public func cancelWait(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.wake(.closed)
    }

    /// Waits until the last sequence exceeds `sequence`.
    ///
    /// - Returns: The new last sequence, or `nil` when the notifier is closed or the task is cancelled.
    public func wait(after sequence: UInt64) async -> UInt64? {
        if case .changed(let sequence) = await wait(after: sequence, deadline: nil) { return sequence }
        return nil
    }

    // MARK: - Deadlines

    /// Makes sure the timer fires by `deadline`: a timer aiming earlier is kept, a later one is replaced.
    private func armTimer(_ state: inout State, for deadline: ContinuousClock.Instant) {
        if let timer = state.timer, timer.target <= deadline { return }
        state.timer?.task.cancel()
        state.timerGeneration += 1
        let generation = state.timerGeneration
        let task = Task { [weak self] in
            var target = deadline
            while true {
                try? await Task.sleep(until: target, clock: .continuous)
                guard let self, let next = self.expireDeadlines(generation: generation) else { return }
                target = next
            }
        }
        state.timer = DeadlineTimer(generation: generation, target: deadline, task: task)
    }

    /// Wakes the waiters whose deadline passed and returns the next deadline, or nil when the timer of
    /// `generation` should stop (replaced, closed, or no deadline left).
    private func expireDeadlines(generation: UInt64) -> ContinuousClock.Instant? {
        let (expired, next): ([@Sendable (WaitOutcome) -> Void], ContinuousClock.Instant?) =
            state.withLock { state in
                guard state.timer?.generation == generation else { return ([], nil) }
                let now = ContinuousClock.now
                var expired: [@Sendable (WaitOutcome) -> Void] = []
                var next: ContinuousClock.Instant?
                for (id, waiter) in state.waiters {
                    guard let deadline = waiter.deadline else { continue }
                    if deadline <= now {
                        expired.append(waiter.wake)
                        state.waiters[id] = nil
                    } else if next.map({ deadline < $0 }) ?? true {
                        next = deadline
                    }
                }
                if let next {
                    state.timer?.target = next
                } else {
                    state.timer = nil
                }
                return (expired, next)
            }
        for wake in expired { wake(.deadline) }
        return next
    }
}
