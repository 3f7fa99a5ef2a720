import Foundation
import Synchronization

// MARK: - StorageThreads

/// Threads for work that blocks on a storage (a `TaskExecutor`, as GRDB's and NIO's thread pools keep blocking work
/// apart), so that a storage call that waits — PostgreSQL a few milliseconds away, or one that stopped answering —
/// holds one of these threads and not one of Swift's cooperative threads, of which there are as many as cores.
///
/// Each remote database has threads of its own (``forDatabase(_:)``): a database whose server stopped answering can
/// use up only its own, and requests to the others go on. Requests that name no database configured at the start
/// (server-wide endpoints, databases made since) share ``shared``.
///
/// ```swift
/// let response = try await withTaskExecutorPreference(StorageThreads.forDatabase("todo")) {
///     try await responder.respond(to: request, context: context)
/// }
/// ```
///
/// Jobs run in the order they are enqueued, each on the first free thread; threads start as jobs find none free, up
/// to ``limit``, and then live as long as the process.
public final class StorageThreads: TaskExecutor, @unchecked Sendable {
    /// The threads of requests that name no remote database configured at the start.
    public static let shared = StorageThreads(name: "shared", limit: 64)

    /// The most threads a remote database's work runs on at once.
    public static let perDatabaseLimit = 32

    private static let byDatabase = Mutex<[String: StorageThreads]>([:])

    /// The threads of the remote database `name` (the same ones for the life of the process, whatever becomes of the
    /// database: a database deleted and made again under its name gets them back).
    public static func forDatabase(_ name: String) -> StorageThreads {
        byDatabase.withLock { pools in
            if let pool = pools[name] { return pool }
            let pool = StorageThreads(name: name, limit: perDatabaseLimit)
            pools[name] = pool
            return pool
        }
    }

    /// The most threads this pool starts.
    public let limit: Int
    private let name: String
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var waiting: [UnownedJob] = []
    private var next = 0
    private var started = 0
    private var idle = 0
    private var running = 0
    private var observers = 0

    /// A pool of at most `limit` threads named after `name`.
    init(name: String, limit: Int) {
        self.name = name
        self.limit = limit
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        waiting.append(job)
        // More jobs waiting than threads waiting for jobs (a thread signalled a moment ago still counts as waiting
        // until it has the lock back, but its job is still waiting too): another thread, while the limit allows.
        let starts = waiting.count - next > idle && started < limit
        if starts { started += 1 }
        if observers > 0 { condition.broadcast() } else { condition.signal() }
        let index = started
        condition.unlock()
        if starts {
            let thread = Thread { [self] in run() }
            thread.name = "couchette-storage-\(name)-\(index)"
            thread.start()
        }
    }

    /// Blocks until `count` jobs run at once (for tests: a pool all of whose threads are taken).
    func waitUntilRunning(_ count: Int) {
        condition.withLock {
            observers += 1
            while running < count { condition.wait() }
            observers -= 1
        }
    }

    /// Runs jobs as they come, forever.
    private func run() {
        condition.lock()
        while true {
            while next == waiting.count {
                idle += 1
                condition.wait()
                idle -= 1
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
        }
    }
}
