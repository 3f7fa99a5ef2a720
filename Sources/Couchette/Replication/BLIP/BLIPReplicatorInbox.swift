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
    /// Where revisions pulled from the server find what this side already holds.
    struct LocalContent: Sendable {
        /// Whether an attachment's content is stored here (then it is not fetched).
        var holds: @Sendable (AttachmentDigest) -> Bool
        /// The body of a revision stored here, as it would be sent (`_attachments` stubs), for applying a delta.
        var body: @Sendable (_ documentID: String, _ revisionID: String) async throws -> [String: JSONValue]?
        /// The bytes of a stored attachment, for proving to the server that this side holds them.
        var content: @Sendable (AttachmentDigest) -> Data?
    }

    /// A pulled revision, or nil for a `norev`.
    typealias Arrival = Result<ReplicatedRevision?, CouchetteError>

    /// A `changes` message the passes read and then answer.
    struct ChangesBatch: Sendable {
        var message: BLIPMessage
        var entries: [JSONValue]
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
        /// The content of revisions being pushed, by digest, for the server's `getAttachment` and `proveAttachment`.
        var outgoing: [AttachmentDigest: (blob: Blob, count: Int)] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    private let local: LocalContent

    init(local: LocalContent) {
        self.local = local
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
            return serveAttachment(request)
        case "proveAttachment":
            return proveAttachment(request)
        default:
            return request.errorReply(domain: "BLIP", code: 404, message: "no handler for message")
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

    /// Reads a pulled `rev`: applies a delta to its base revision here, fetches the attachments this side lacks, and
    /// hands it to the pass waiting for it; answers once that is done (the server serves a `getAttachment` only while
    /// the `rev` awaits its answer).
    private func receiveRevision(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        let properties = request.properties
        guard let id = properties["id"], let revisionID = properties["rev"] else {
            return request.errorReply(domain: "HTTP", code: 400, message: "rev needs id and rev")
        }
        let key = Self.key(id, revisionID)
        do {
            var parsed = request.body.isEmpty ? JSONValue.object([:]) : try JSONValue(parsing: request.body)
            if let source = properties["deltaSrc"] {
                guard let base = try await local.body(id, source) else {
                    throw CouchetteError(.notFound, message: "The delta base \(source) of \"\(id)\" is not here", status: 404)
                }
                parsed = try JSONDelta.apply(parsed, to: .object(base))
            }
            guard case .object(var body) = parsed else {
                throw CouchetteError(.badInput, message: "The body of \"\(id)\" is not a JSON object", status: 400)
            }
            for member in ["_id", "_rev", "_revisions", "_deleted"] { body[member] = nil }
            let history = (properties["history"] ?? "").split(separator: ",").map(String.init)
            var revision = ReplicatedRevision(
                documentID: id, revisionID: revisionID, history: [revisionID] + history,
                isDeleted: properties["deleted"] == "1" || properties["deleted"] == "true", body: body, attachments: [:])
            try await fetchAttachments(of: &revision, from: connection)
            arrive(key, .success(revision))
            return request.reply()
        } catch {
            let failure = CouchetteError.wrap(error)
            arrive(key, .failure(failure))
            return request.errorReply(domain: "HTTP", code: failure.status, message: failure.message)
        }
    }

    /// Fetches (`getAttachment`) the content of each attachment stub whose digest is not stored here.
    private func fetchAttachments(of revision: inout ReplicatedRevision, from connection: BLIPConnection) async throws {
        for (name, metadata) in revision.body["_attachments"]?.objectValue ?? [:] {
            guard let digest = revision.digest(ofAttachment: name), !local.holds(digest) else { continue }
            let reply: BLIPMessage
            do {
                reply = try await connection.send(properties: [
                    "Profile": "getAttachment", "digest": digest.description, "docID": revision.documentID,
                ])
            } catch {
                throw Self.closedError
            }
            if let error = reply.error { throw Self.error(error) }
            guard AttachmentDigest.sha1(of: reply.body) == digest else {
                throw CouchetteError(
                    .badInput, message: "Attachment \"\(name)\" of \"\(revision.documentID)\" does not match its digest",
                    status: 400)
            }
            revision.attachments[name] = Blob(
                contentType: metadata["content_type"]?.stringValue ?? "application/octet-stream", data: Data(reply.body))
        }
    }

    /// `getAttachment` from the server: the content of a revision being pushed.
    private func serveAttachment(_ request: BLIPMessage) -> BLIPMessage {
        guard let digest = request.properties["digest"].flatMap({ try? AttachmentDigest(parsing: $0) }) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing digest")
        }
        guard let blob = state.withLock({ $0.outgoing[digest]?.blob }), let content = blob.content else {
            return request.errorReply(domain: "HTTP", code: 404, message: "not being sent")
        }
        return request.reply(body: Array(content), isCompressed: request.properties["compress"] == "true")
    }

    /// `proveAttachment` (§3.9): the SHA-1 of the nonce's length, the nonce and the content, as a digest string.
    private func proveAttachment(_ request: BLIPMessage) -> BLIPMessage {
        guard let digest = request.properties["digest"].flatMap({ try? AttachmentDigest(parsing: $0) }) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing digest")
        }
        guard (16...255).contains(request.body.count) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "the nonce must be 16 to 255 bytes")
        }
        let sending = state.withLock { $0.outgoing[digest]?.blob }
        guard let content = sending?.content ?? local.content(digest) else {
            return request.errorReply(domain: "HTTP", code: 404, message: "missing")
        }
        return request.reply(body: Array(AttachmentDigest.proof(of: content, nonce: request.body).description.utf8))
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
                if state.closed { throw Self.closedError }
                return state.changes.isEmpty ? nil : state.changes.removeFirst()
            }
            guard let message = next else {
                if state.withLock({ $0.caughtUp }) { return nil }
                try await waitForChanges()
                continue
            }
            let entries = (try? JSONValue(parsing: message.body))?.arrayValue ?? []
            if entries.isEmpty {
                state.withLock { $0.caughtUp = true }
                return nil
            }
            let batch = ChangesBatch(message: message, entries: entries)
            state.withLock { state in
                state.delivered = true
                if let last = entries.last?[0] { state.subscribedSince = .some(last.serializedString()) }
            }
            return batch
        }
    }

    /// Returns once a `changes` message is here (at once when one is), or when the task is cancelled.
    func waitForChanges() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if state.closed { return .failure(Self.closedError) }
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
                    if state.closed { return .failure(Self.closedError) }
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

    // MARK: - Pushing

    /// Offers the content of revisions being pushed to the server's `getAttachment` and `proveAttachment`.
    func offer(_ revisions: [ReplicatedRevision]) {
        state.withLock { state in
            for revision in revisions {
                for (name, blob) in revision.attachments {
                    guard let digest = revision.digest(ofAttachment: name) else { continue }
                    state.outgoing[digest, default: (blob, 0)].count += 1
                }
            }
        }
    }

    /// Withdraws what ``offer(_:)`` offered.
    func withdraw(_ revisions: [ReplicatedRevision]) {
        state.withLock { state in
            for revision in revisions {
                for name in revision.attachments.keys {
                    guard let digest = revision.digest(ofAttachment: name), let entry = state.outgoing[digest] else {
                        continue
                    }
                    state.outgoing[digest] = entry.count > 1 ? (entry.blob, entry.count - 1) : nil
                }
            }
        }
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
        changesWaiter?.resume(throwing: Self.closedError)
        for waiter in arrivalWaiters.values { waiter.resume(returning: .failure(Self.closedError)) }
    }

    // MARK: - Helpers

    /// Identifies a revision among those awaited.
    static func key(_ documentID: String, _ revisionID: String) -> String { documentID + "\u{0}" + revisionID }

    static let closedError = CouchetteError(.network, message: "The BLIP connection closed")
    /// What a cancelled wait for a revision reports (the pass then sees its task cancelled).
    static let cancelled = CouchetteError(.network, message: "Cancelled while waiting for a revision")

    /// The error an `ERR` reply stands for: an HTTP status keeps its meaning (401, 403, 404, 409…), others are
    /// network errors.
    static func error(_ error: (domain: String, code: Int, message: String)) -> CouchetteError {
        let reason = error.message.isEmpty ? "\(error.domain) error \(error.code)" : error.message
        guard error.domain == "HTTP" else { return CouchetteError(.network, message: reason) }
        return RemoteDatabaseClient.error(status: error.code, reason: reason)
    }
}
