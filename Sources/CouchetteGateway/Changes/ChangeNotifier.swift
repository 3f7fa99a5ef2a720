import Synchronization

// MARK: - ChangeNotifier

/// Wakes `_changes` feeds when a database's sequence advances: the one place writes announce themselves.
///
/// Writers call ``notify(_:)`` after each committed change; feeds wait with ``wait(after:)``, which returns
/// as soon as the last sequence exceeds theirs. ``close()`` (database offline, server shutdown) wakes every
/// waiter with `nil` and makes later waits return `nil` at once, until ``reopen()``.
///
/// ```swift
/// let notifier = ChangeNotifier(sequence: 0)
/// Task { notifier.notify(1) }
/// let sequence = await notifier.wait(after: 0)  // 1
/// ```
public final class ChangeNotifier: Sendable {
    // MARK: - State

    private struct Waiter {
        let after: UInt64
        let continuation: CheckedContinuation<UInt64?, Never>
    }

    private struct State {
        var sequence: UInt64
        var closed = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
    }

    private let state: Mutex<State>

    // MARK: - Initialiser

    /// Creates a notifier starting at `sequence` (the storage's last sequence).
    public init(sequence: UInt64) {
        state = Mutex(State(sequence: sequence))
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
        let woken: [(CheckedContinuation<UInt64?, Never>, UInt64)] = state.withLock { state in
            guard sequence > state.sequence else { return [] }
            state.sequence = sequence
            var woken: [(CheckedContinuation<UInt64?, Never>, UInt64)] = []
            for (id, waiter) in state.waiters where waiter.after < sequence {
                woken.append((waiter.continuation, sequence))
                state.waiters[id] = nil
            }
            return woken
        }
        for (continuation, sequence) in woken { continuation.resume(returning: sequence) }
    }

    /// Wakes every waiter with `nil`; later waits return `nil` immediately until ``reopen()``.
    public func close() {
        let woken = state.withLock { state in
            state.closed = true
            let woken = state.waiters.values.map(\.continuation)
            state.waiters = [:]
            return woken
        }
        for continuation in woken { continuation.resume(returning: nil) }
    }

    /// Lets waits block again after ``close()``.
    public func reopen() {
        state.withLock { $0.closed = false }
    }

    // MARK: - Waiting

    /// Waits until the last sequence exceeds `sequence`.
    ///
    /// - Returns: The new last sequence, or `nil` when the notifier is closed or the task is cancelled.
    public func wait(after sequence: UInt64) async -> UInt64? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<UInt64?, Never>) in
                let immediate: UInt64?? = state.withLock { state in
                    if state.closed || Task.isCancelled { return .some(nil) }
                    if state.sequence > sequence { return .some(state.sequence) }
                    state.waiters[id] = Waiter(after: sequence, continuation: continuation)
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
        }
    }
}
