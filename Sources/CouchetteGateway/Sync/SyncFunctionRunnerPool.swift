import Dispatch
import Synchronization

// MARK: - SyncFunctionRunnerPool

/// Up to `size` ``SyncFunctionRunner``s shared by concurrent writes: each call borrows one, waiting while all are
/// busy, so that as many sync function calls run in parallel as there are runners.
///
/// Runners are created when first needed (the first one by whoever builds the pool, which reports compile errors).
/// A runner whose call timed out is dropped rather than returned, so a runaway function cannot leave half-changed
/// globals behind; the next borrower compiles a fresh one.
///
/// ```swift
/// let runner = try pool.borrow()
/// let result = runner.run(document: json, oldDocument: nil, user: nil)
/// pool.giveBack(runner, reusable: true)
/// ```
final class SyncFunctionRunnerPool: Sendable {
    private struct State {
        var idle: [SyncFunctionRunner]
        var created: Int
    }

    /// One permit per runner that may exist; a borrower holds one until it gives its runner back.
    private let permits: DispatchSemaphore
    private let state: Mutex<State>
    private let makeRunner: @Sendable () throws(JavaScriptException) -> SyncFunctionRunner

    /// Creates a pool.
    ///
    /// - Parameters:
    ///   - size: The most runners that exist at once (at least 1).
    ///   - first: A runner already made, e.g. to check that the function compiles.
    ///   - makeRunner: Makes another runner when all existing ones are busy.
    init(
        size: Int, first: SyncFunctionRunner,
        makeRunner: @escaping @Sendable () throws(JavaScriptException) -> SyncFunctionRunner
    ) {
        let size = max(1, size)
        permits = DispatchSemaphore(value: size)
        state = Mutex(State(idle: [first], created: 1))
        self.makeRunner = makeRunner
    }

    /// Takes an idle runner, makes one if fewer than `size` exist, or waits for one to be given back.
    ///
    /// - Throws: The exception making a new runner raised; the permit is returned then.
    func borrow() throws(JavaScriptException) -> SyncFunctionRunner {
        permits.wait()
        let idle: SyncFunctionRunner? = state.withLock { state in
            if let runner = state.idle.popLast() { return runner }
            state.created += 1
            return nil
        }
        if let idle { return idle }
        do {
            return try makeRunner()
        } catch {
            state.withLock { $0.created -= 1 }
            permits.signal()
            throw error
        }
    }

    /// Returns a borrowed runner.
    ///
    /// - Parameters:
    ///   - runner: The runner ``borrow()`` gave.
    ///   - reusable: False to drop it (after a time-out); a new one is made when needed.
    func giveBack(_ runner: SyncFunctionRunner, reusable: Bool) {
        state.withLock { state in
            if reusable {
                state.idle.append(runner)
            } else {
                state.created -= 1
            }
        }
        permits.signal()
    }

    /// How many runners exist now (idle or lent).
    var runnerCount: Int {
        state.withLock { $0.created }
    }
}
