import CouchetteCore
import Foundation
import Synchronization

// MARK: - ResyncJob

/// A resync running in the background while the database stays online (`POST /{db}/_resync?action=start`), with
/// the progress `GET /{db}/_resync` reports and the Admin UI draws: documents are re-routed one by one, each in its
/// own atomic update, so concurrent writes are safe (a document written meanwhile is routed by its write).
///
/// One job per database and node; on several gateway nodes, each resyncs on its own (all of them reach the same
/// routing).
public final class ResyncJob: Sendable {
    /// Where the job stands.
    public enum Status: String, Sendable {
        case idle, running, stopping, completed, stopped, failed
    }

    /// A snapshot of the job.
    public struct Progress: Sendable, Equatable {
        public var status: Status = .idle
        /// Documents looked at so far.
        public var processed = 0
        /// Documents whose routing changed so far.
        public var changed = 0
        /// Documents in the database when the job started (deleted ones included).
        public var total = 0
        /// Why the job failed.
        public var error: String?

        /// SG 3's shape: `{"status", "docs_processed", "docs_changed", "docs_total", "error"?}`.
        public var json: JSONValue {
            var members: [String: JSONValue] = [
                "status": .string(status.rawValue), "docs_processed": .int(Int64(processed)),
                "docs_changed": .int(Int64(changed)), "docs_total": .int(Int64(total)),
            ]
            if let error { members["error"] = .string(error) }
            return .object(members)
        }
    }

    private let state = Mutex(Progress())
    /// Callers of ``finished()`` waiting for the running job to end.
    private let waiters = Mutex<[CheckedContinuation<Progress, Never>]>([])

    /// Creates an idle job.
    public init() {}

    /// The job's progress now.
    public var progress: Progress { state.withLock { $0 } }

    /// Starts resyncing `documents` on a thread of its own.
    ///
    /// - Parameter total: How many documents there are (for the progress bar).
    /// - Throws: 503 when a resync is already running.
    func start(_ documents: DocumentStore, total: Int) throws(GatewayError) {
        try state.withLock { (progress: inout Progress) throws(GatewayError) in
            guard progress.status != .running && progress.status != .stopping else {
                throw .serviceUnavailable("Database _resync is already in progress")
            }
            progress = Progress(status: .running, total: total)
        }
        let thread = Thread { [self] in
            do throws(GatewayError) {
                _ = try documents.resync { processed, changed in
                    self.state.withLock { progress in
                        progress.processed = processed
                        progress.changed = changed
                        return progress.status == .running
                    }
                }
                state.withLock { $0.status = $0.status == .stopping ? .stopped : .completed }
            } catch {
                state.withLock { progress in
                    progress.status = .failed
                    progress.error = error.reason
                }
            }
            let final = progress
            for waiter in waiters.withLock({ waiters in defer { waiters.removeAll() }; return waiters }) {
                waiter.resume(returning: final)
            }
        }
        thread.name = "couchette-resync"
        thread.start()
    }

    /// The progress once the job is not running any more (at once when it is not running).
    public func finished() async -> Progress {
        await withCheckedContinuation { continuation in
            let done: Progress? = waiters.withLock { waiters in
                // Checked under the waiters' lock, which the thread takes after its last update of the state.
                let now = progress
                guard now.status == .running || now.status == .stopping else { return now }
                waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Asks a running job to stop after its current batch.
    func stop() {
        state.withLock { progress in
            if progress.status == .running { progress.status = .stopping }
        }
    }
}
