import CouchetteBLIP
import CouchetteCore
import Foundation
import Synchronization

// MARK: - BLIPReplicatorInbox

/// What a replicator's BLIP connection receives from the server (spec: blip-sync-protocol.md §3), kept until the
/// replication passes ask for it: the `changes` messages of a pull subscription, the `rev` and `norev` messages that
/// answer them (their attachments fetched with `getAttachment` before the `rev` is answered), and, during a push, the
/// server's `getAttachment` and `proveAttachment` requests for the content of revisions being sent.
///
/// The connection's request handler holds the inbox, never the other way round, so dropping the connection frees
/// both. When the connection closes every waiter fails with a `.network` error.
final class BLIPReplicatorInbox: Sendable {
    /// A pulled revision, or nil for a `norev`.
    typealias Arrival = Result<ReplicatedRevision?, CouchetteError>

    /// A `changes` message the passes read and then answer.
    struct ChangesBatch: Sendable {
        var message: BLIPMessage
        /// Its entries in order (nil for a malformed one, answered `0`).
        var entries: [OfferedChange?]
    }

    private struct State: ~Copyable {
        var changes: [BLIPMessage] = []
        var changesWaiter: CheckedContinuation<Void, any Error>?
        /// Whether the server said it is caught up (`changes []`).
        var caughtUp = false
        /// Whether the current subscription brought a batch.
        var delivered = false
        /// The subscription's position: the sequence (JSON text) after the last batch read; nil before subscribing.
        var subscribedSince: String??
        var arrivals: [String: Arrival] = [:]
        var arrivalWaiters: [String: CheckedContinuation<Arrival, Never>] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    private let local: BLIPLocalContent
    /// The content of revisions being pushed, for the server's `getAttachment` and `proveAttachment`.
    let offered: BLIPOfferedContent

    init(local: BLIPLocalContent) {
        self.local = local
        offered = BLIPOfferedContent(local: local)
    }

    // MARK: - Incoming requests

    /// The connection's request handler.
    func handle(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        switch request.profile {
        case "changes":
            return nil  // queued in order by ``observe(_:)``, answered by the pass that reads it
        case "rev":
            return await receiveRevision(request, on: connection)
        case "norev":
            arrive(Self.key(request.properties["id"] ?? "", request.properties["rev"] ?? ""), .success(nil))
            return nil
        case "getAttachment":
            return offered.serveAttachment(request)
        case "proveAttachment":
            return offered.proveAttachment(request)
        default:
            return request.unhandledReply()
        }
    }

    /// The connection's observer: queues `changes` messages in the order they arrived (their handlers may run in
    /// another order).
    func observe(_ request: BLIPMessage) {
        guard request.profile == "changes" else { return }
        let waiter = state.withLock { state in
            state.changes.append(request)
            defer { state.changesWaiter = nil }
            return state.changesWaiter
        }
        waiter?.resume()
    }

    /// Reads a pulled `rev` (``BLIPRevisionMessage/revision(from:on:local:)``) and hands it to the pass waiting for
    /// it; answers once that is done (the server serves a `getAttachment` only while the `rev` awaits its answer).
    private func receiveRevision(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        let key = Self.key(request.properties["id"] ?? "", request.properties["rev"] ?? "")
        do {
            let revision = try await BLIPRevisionMessage.revision(from: request, on: connection, local: local)
            arrive(key, .success(revision))
            return request.reply()
        } catch {
            arrive(key, .failure(CouchetteError.wrap(error)))
            return BLIPRevisionMessage.errorReply(to: request, error)
        }
    }

    // MARK: - The pull subscription

    /// The position of the subscription on this connection (nil when none: `.some(nil)` is one from the start).
    var subscribedSince: String?? { state.withLock { $0.subscribedSince } }

    /// Notes a new subscription from `since`.
    func subscribed(since: String?) {
        state.withLock { state in
            state.subscribedSince = .some(since)
            state.caughtUp = false
            state.delivered = false
        }
    }

    /// Whether the current subscription brought a batch of changes.
    var deliveredSinceSubscribing: Bool { state.withLock { $0.delivered } }

    /// The next batch of changes: waits for one until the server said it is caught up, then only takes one already
    /// here; nil when there is none (the `changes []` that says so is answered here).
    func nextChanges() async throws -> ChangesBatch? {
        while true {
            let next: BLIPMessage? = try state.withLock { state in
                if state.closed { throw BLIPRevisionMessage.closedError }
                return state.changes.isEmpty ? nil : state.changes.removeFirst()
            }
            guard let message = next else {
                if state.withLock({ $0.caughtUp }) { return nil }
                try await waitForChanges()
                continue
            }
            let entries = (try? OfferedChange.entries(in: message.body)) ?? []
            if entries.isEmpty {
                state.withLock { $0.caughtUp = true }
                return nil
            }
            let batch = ChangesBatch(message: message, entries: entries)
            state.withLock { state in
                state.delivered = true
                if let last = entries.last??.sequence { state.subscribedSince = .some(last.serializedString()) }
            }
            return batch
        }
    }

    /// Returns once a `changes` message is here (at once when one is), or when the task is cancelled.
    func waitForChanges() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if state.closed { return .failure(BLIPRevisionMessage.closedError) }
                    if !state.changes.isEmpty || Task.isCancelled { return .success(()) }
                    state.changesWaiter?.resume()
                    state.changesWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            wakeChangesWaiter()
        }
        try Task.checkCancellation()
    }

    /// Wakes a ``waitForChanges()`` without a message (a pass's timeout).
    func wakeChangesWaiter() {
        let waiter = state.withLock { state in
            defer { state.changesWaiter = nil }
            return state.changesWaiter
        }
        waiter?.resume()
    }

    /// The revision of `key` once its `rev` or `norev` arrived; a `CancellationError` failure when the task is
    /// cancelled first.
    func arrival(of key: String) async -> Arrival {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let arrived: Arrival? = state.withLock { state in
                    if let arrival = state.arrivals.removeValue(forKey: key) { return arrival }
                    if state.closed { return .failure(BLIPRevisionMessage.closedError) }
                    if Task.isCancelled { return .failure(Self.cancelled) }
                    state.arrivalWaiters[key] = continuation
                    return nil
                }
                if let arrived { continuation.resume(returning: arrived) }
            }
        } onCancel: {
            state.withLock { $0.arrivalWaiters.removeValue(forKey: key) }?.resume(returning: .failure(Self.cancelled))
        }
    }

    private func arrive(_ key: String, _ arrival: Arrival) {
        let waiter = state.withLock { state in
            if let waiter = state.arrivalWaiters.removeValue(forKey: key) { return Optional(waiter) }
            state.arrivals[key] = arrival
            return nil
        }
        waiter?.resume(returning: arrival)
    }

    // MARK: - Closing

    /// The connection closed: every waiter fails.
    func close() {
        let (changesWaiter, arrivalWaiters) = state.withLock { state in
            state.closed = true
            defer {
                state.changesWaiter = nil
                state.arrivalWaiters = [:]
            }
            return (state.changesWaiter, state.arrivalWaiters)
        }
        changesWaiter?.resume(throwing: BLIPRevisionMessage.closedError)
        for waiter in arrivalWaiters.values { waiter.resume(returning: .failure(BLIPRevisionMessage.closedError)) }
    }

    // MARK: - Helpers

    /// Identifies a revision among those awaited.
    static func key(_ documentID: String, _ revisionID: String) -> String { documentID + "\u{0}" + revisionID }

    /// What a cancelled wait for a revision reports (the pass then sees its task cancelled).
    static let cancelled = CouchetteError(.network, message: "Cancelled while waiting for a revision")

}
