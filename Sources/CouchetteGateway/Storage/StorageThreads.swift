import Foundation
import Synchronization

// MARK: - StorageThreads

/// The threads request handlers run on (a `TaskExecutor`, as GRDB's and NIO's thread pools keep blocking work apart),
/// so that a storage call that blocks — PostgreSQL a few milliseconds away, a long SQLite transaction — holds one of
/// these threads and not one of Swift's cooperative threads, of which there are as many as cores: two requests
/// waiting on a slow database no longer stall every other database, both ports and every feed.
///
/// ```swift
/// let response = try await withTaskExecutorPreference(StorageThreads.shared) {
///     try await responder.respond(to: request, context: context)
/// }
/// ```
///
/// Jobs run in the order they are enqueued, each on the first free thread.
public final class StorageThreads: TaskExecutor, Sendable {
    /// The threads the gateway's request handlers run on.
    public static let shared = StorageThreads(count: 64)

    private let jobs = Mutex<(waiting: [UnownedJob], next: Int)>(([], 0))
    private let available = DispatchSemaphore(value: 0)

    /// `count` threads, started at once.
    public init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in run() }
            thread.name = "couchette-storage-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.waiting.append(job) }
        available.signal()
    }

    /// Runs jobs as they come, forever (the pool lives as long as the process).
    private func run() {
        while true {
            available.wait()
            let job = jobs.withLock { jobs -> UnownedJob in
                let job = jobs.waiting[jobs.next]
                jobs.next += 1
                // The queue's front is dropped in slices, not one element at a time.
                if jobs.next >= 1_024 || jobs.next == jobs.waiting.count {
                    jobs.waiting.removeFirst(jobs.next)
                    jobs.next = 0
                }
                return job
            }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
