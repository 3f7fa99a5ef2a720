import Synchronization

// MARK: - DeadlineExceeded

/// Thrown by ``withDeadline(_:_:_:)`` when the work did not finish in time: a hang becomes a test failure that
/// says what was waited for.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What was waited for.
    public let what: String
    /// How long it was given.
    public let limit: Duration

    public var description: String { "\(what) did not finish within \(limit)" }
}

// MARK: - withDeadline

/// Runs `body`, throwing ``DeadlineExceeded`` once `limit` passes: a guard against hanging, never a way to wait
/// (the caller goes on as soon as `body` returns).
///
/// Unlike a task group, this returns on time even when `body` ignores cancellation: `body` runs in its own task,
/// which is cancelled and left behind when the deadline passes.
///
/// ```swift
/// let status = try await withDeadline(.seconds(60), "the replicator going idle") {
///     for await status in statuses where status.activity == .idle { return status }
///     return nil
/// }
/// ```
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: @autoclosure () -> String = "the operation",
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let description = what()
    let work = Task { try await body() }
    let outcome = Outcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.install(continuation)
            let timer = Task {
                try await Task.sleep(for: limit)
                if outcome.resume(with: .failure(DeadlineExceeded(what: description, limit: limit))) {
                    work.cancel()
                }
            }
            Task {
                let result = await work.result
                timer.cancel()
                outcome.resume(with: result)
            }
        }
    } onCancel: {
        work.cancel()
    }
}

/// The first element of `sequence` that satisfies `predicate`, or nil when the sequence ends first; throws
/// ``DeadlineExceeded`` after `limit`.
///
/// ```swift
/// _ = try await first(of: replicator.changes(), within: .seconds(60), "the replicator stopping") {
///     $0.activity == .stopped
/// }
/// ```
public func first<S: AsyncSequence & Sendable>(
    of sequence: S, within limit: Duration = .seconds(30), _ what: @autoclosure () -> String = "the element",
    where predicate: @escaping @Sendable (S.Element) -> Bool = { _ in true }
) async throws -> S.Element? where S.Element: Sendable {
    try await withDeadline(limit, what()) {
        for try await element in sequence where predicate(element) { return element }
        return nil
    }
}

/// The next element of `stream`, or nil when it ends or `timeout` passes first (then the stream is cancelled):
/// for waits where nothing arriving is an answer, or is checked by the caller.
public func next<Element: Sendable>(_ stream: AsyncStream<Element>, timeout: Duration = .seconds(10)) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// A continuation resumed once, by whichever of the work and the timer comes first.
private final class Outcome<T: Sendable>: Sendable {
    private let waiting = Mutex<CheckedContinuation<T, any Error>?>(nil)

    /// Sets the continuation, before either side can resume it.
    func install(_ continuation: CheckedContinuation<T, any Error>) {
        waiting.withLock { $0 = continuation }
    }

    /// Resumes with `result` unless the other side already did; returns whether this call did.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        guard let continuation = waiting.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
