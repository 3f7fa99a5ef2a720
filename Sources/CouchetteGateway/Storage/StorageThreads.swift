import Foundation
import Synchronization

// MARK: - StorageThreads

/// Threads for work that blocks on a storage (a `TaskExecutor`, as GRDB's and NIO's thread pools keep blocking work
/// apart), so that a storage call that waits — PostgreSQL a few milliseconds away, or one that stopped answering —
/// holds one of these threads and not one of Swift's cooperative threads, of which there are as many as cores.
///
/// Each remote database has threads of its own (``forDatabase(_:limit:)``): a database whose server stopped answering
/// can use up only its own, and requests to the others go on. Requests that name no database (server-wide endpoints)
/// share ``shared`` while some database is remote.
///
/// ```swift
/// let threads = StorageThreads.forDatabase("todo", limit: 32)
/// let response = try await withTaskExecutorPreference(threads) {
///     try await responder.respond(to: request, context: context)
/// }
/// ```
///
/// Jobs run in the order they are enqueued, each on the first free thread; threads start as jobs find none free, up
/// to ``limit``, and end once they have waited ``idleLifetime`` without a job: a pool whose database is gone, or
/// that a burst grew, shrinks back to no threads.
public final class StorageThreads: TaskExecutor, @unchecked Sendable {
    /// The threads of requests that name no remote database (server-wide endpoints, while some database is remote).
    public static let shared = StorageThreads(name: "shared", limit: 64)

    /// The threads a remote database's work runs on beyond its connections: work that waits for no connection
    /// (a request refused before it reads, a feed parked on a notification) is not queued behind the ones that do.
    public static let threadsBeyondConnections = 8

    /// How long a thread waits without a job before it ends, unless a pool is given another.
    public static let defaultIdleLifetime: Duration = .seconds(60)

    private static let byDatabase = Mutex<[String: StorageThreads]>([:])

    /// The threads of the remote database `name`, at most `limit` (the same pool, its limit set again, for a
    /// database deleted and made again under its name).
    public static func forDatabase(_ name: String, limit: Int) -> StorageThreads {
        let pool = byDatabase.withLock { pools in
            if let pool = pools[name] { return pool }
            let pool = StorageThreads(name: name, limit: limit)
            pools[name] = pool
            return pool
        }
        pool.condition.withLock { pool.maximum = limit }
        return pool
    }

    /// The most threads this pool starts.
    public var limit: Int { condition.withLock { maximum } }
    /// How long a thread waits without a job before it ends.
    public let idleLifetime: Duration
    private let name: String
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var maximum: Int
    private var waiting: [UnownedJob] = []
    private var next = 0
    private var started = 0
    /// Threads blocked in ``blocking(_:)``, not counted against the limit.
    private var blocked = 0
    private var idle = 0
    private var running = 0
    private var observers = 0

    /// A pool of at most `limit` threads named after `name`, each ending after `idleLifetime` without a job.
    init(name: String, limit: Int, idleLifetime: Duration = StorageThreads.defaultIdleLifetime) {
        self.name = name
        self.idleLifetime = idleLifetime
        self.maximum = limit
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        waiting.append(job)
        let starts = claimsNewThread()
        if observers > 0 { condition.broadcast() } else { condition.signal() }
        let index = started
        condition.unlock()
        if starts { startThread(index) }
    }

    /// Whether a job waiting needs a thread started, counting it started if so: more jobs waiting than threads
    /// waiting for jobs (a thread signalled a moment ago still counts as waiting until it has the lock back, but its
    /// job is still waiting too), and fewer threads than the limit beside those blocked in ``blocking(_:)`` (at most
    /// the limit again: enough for every job holding what they wait for to go on). Call with `condition` locked.
    private func claimsNewThread() -> Bool {
        guard waiting.count - next > idle, started - min(blocked, maximum) < maximum else { return false }
        started += 1
        return true
    }

    private func startThread(_ index: Int) {
        let thread = Thread { [self] in run() }
        thread.name = "couchette-storage-\(name)-\(index)"
        thread.start()
    }

    /// Runs `wait`, a blocking wait for something only another job may give back (a PostgreSQL connection held by
    /// a task suspended at an `await`), with the calling thread counted out of its pool's limit, so that the job that
    /// gives it back finds a thread to run on (a thread is started for it if none is free). Outside these threads,
    /// `wait` just runs.
    static func blocking<T, E: Error>(_ wait: () throws(E) -> T) throws(E) -> T {
        guard let pool = Thread.current.threadDictionary[threadKey] as? StorageThreads else { return try wait() }
        pool.condition.lock()
        pool.blocked += 1
        let starts = pool.claimsNewThread()
        let index = pool.started
        pool.condition.unlock()
        if starts { pool.startThread(index) }
        defer { pool.condition.withLock { pool.blocked -= 1 } }
        return try wait()
    }

    /// The key of a storage thread's pool in its thread dictionary.
    private static let threadKey = "couchette.storage-threads"

    /// Blocks until `count` jobs run at once, for at most `timeout`; whether they do (for tests: a pool all of whose
    /// threads are taken).
    func waitUntilRunning(_ count: Int, within timeout: Duration = .seconds(30)) -> Bool {
        waitUntil(within: timeout) { running >= count }
    }

    /// Blocks until no job runs, for at most `timeout`; whether none does (for tests: a job suspended at an `await`
    /// holds no thread, one blocked in a wait does).
    func waitUntilNoneRunning(within timeout: Duration) -> Bool {
        waitUntil(within: timeout) { running == 0 }
    }

    /// How many threads the pool has now.
    var threadCount: Int { condition.withLock { started } }

    /// Blocks until the pool has at most `count` threads, for at most `timeout`; whether it has (for tests: idle
    /// ones end).
    func waitUntilThreads(atMost count: Int, within timeout: Duration = .seconds(30)) -> Bool {
        waitUntil(within: timeout) { started <= count }
    }

    /// Blocks until `holds` (read under the lock, after each change the pool makes while observed) is true, for at
    /// most `timeout`; whether it is.
    private func waitUntil(within timeout: Duration, _ holds: () -> Bool) -> Bool {
        let deadline = timeout.deadlineFromNow
        return condition.withLock {
            observers += 1
            defer { observers -= 1 }
            while !holds() {
                guard condition.wait(until: deadline) else { return holds() }
            }
            return true
        }
    }

    /// Runs jobs as they come, until none has come for ``idleLifetime``.
    private func run() {
        Thread.current.threadDictionary[Self.threadKey] = self
        condition.lock()
        while true {
            while next == waiting.count {
                idle += 1
                let signalled = condition.wait(until: idleLifetime.deadlineFromNow)
                idle -= 1
                if !signalled && next == waiting.count {
                    started -= 1
                    if observers > 0 { condition.broadcast() }
                    condition.unlock()
                    return
                }
            }
            let job = waiting[next]
            next += 1
            // The queue's front is dropped in slices, not one element at a time.
            if next >= 1_024 || next == waiting.count {
                waiting.removeFirst(next)
                next = 0
            }
            running += 1
            if observers > 0 { condition.broadcast() }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
            running -= 1
            if observers > 0 { condition.broadcast() }
        }
    }
}
