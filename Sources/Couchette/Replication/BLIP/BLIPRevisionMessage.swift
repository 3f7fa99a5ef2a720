import CouchetteBLIP
import CouchetteCore
import Foundation

// MARK: - BLIPRevisionMessage

/// `rev` messages (spec: blip-sync-protocol.md §3.6) as both Couchette sides of a BLIP connection send and read them
/// — the replicator pushing or pulling, the listener serving a pull or taking a push: a ``ReplicatedRevision`` goes
/// as `id`, `rev`, `history` (ancestors, newest first), `deleted` and its body with attachment stubs, whose content
/// the receiver fetches with `getAttachment` while the `rev` awaits its answer.
enum BLIPRevisionMessage {
    /// A revision as a `rev` message (``RevisionMessage``, the codec both BLIP sides share); `noconflicts` when the
    /// receiver must refuse it (409) unless it descends from the document's current revision there.
    static func message(
        of revision: ReplicatedRevision, sequence: String? = nil, noConflicts: Bool = false
    ) -> RevisionMessage {
        RevisionMessage(
            documentID: revision.documentID, revisionID: revision.revisionID, history: Array(revision.history.dropFirst()),
            isDeleted: revision.isDeleted, sequence: sequence, noConflicts: noConflicts,
            body: JSONValue.object(revision.body).serialized())
    }

    /// Sends each revision as a `rev` (all queued at once, then every answer awaited), offering their attachments
    /// meanwhile; a refusal (403 from a sync function, 409, 400…) is that document's result. A serving side gives
    /// each document's `sequence` (clients keep the last one as their checkpoint); a pusher that offered with
    /// `proposeChanges` sends `noconflicts`.
    ///
    /// - Throws: `.network` when the connection closes; any other `ERR` reply (a 5xx, a BLIP error) fails the batch.
    static func send(
        _ revisions: [ReplicatedRevision], sequences: [String: String] = [:], noConflicts: Bool = false,
        on connection: BLIPConnection, offering offered: BLIPOfferedContent
    ) async throws -> [ReplicationWriteResult] {
        offered.offer(revisions)
        defer { offered.withdraw(revisions) }
        let requests = revisions.map { revision in
            let message = Self.message(of: revision, sequence: sequences[revision.documentID], noConflicts: noConflicts)
            return (properties: message.properties, body: message.body)
        }
        // One call queues them all and one wait collects every answer: a connection call and a wake-up per batch
        // instead of two per revision.
        let replies: [BLIPMessage]
        do {
            replies = try await connection.responses(to: try await connection.queue(requests, compressed: true))
        } catch {
            throw closedError
        }
        var results: [ReplicationWriteResult] = []
        for (revision, reply) in zip(revisions, replies) {
            var result = ReplicationWriteResult(
                documentID: revision.documentID, revisionID: revision.revisionID, isDeleted: revision.isDeleted)
            if let error = reply.error {
                let failure = Self.error(error)
                guard [400, 403, 404, 409, 412, 413].contains(failure.status) else { throw failure }
                result.error = failure
            }
            results.append(result)
        }
        return results
    }

    /// Reads a received `rev`: applies a delta (`deltaSrc`) to its base revision here and fetches (`getAttachment`)
    /// the content of each attachment stub whose digest is not stored here, checking it against its digest.
    ///
    /// - Throws: 400 for a malformed message or content not matching its digest, 404 when a delta's base is not
    ///   here, `.network` when the connection closes, the other side's error for a refused `getAttachment`.
    static func revision(
        from request: BLIPMessage, on connection: BLIPConnection, local: BLIPLocalContent
    ) async throws -> ReplicatedRevision {
        let message = try RevisionMessage(request)
        var body = RevisionMessage.properties(of: .object(try message.bodyObject())) ?? [:]
        if let source = message.deltaSource {
            guard let base = try await local.body(message.documentID, source) else {
                throw CouchetteError(
                    .notFound, message: "The delta base \(source) of \"\(message.documentID)\" is not here", status: 404)
            }
            guard let applied = RevisionMessage.properties(of: try JSONDelta.apply(.object(body), to: .object(base))) else {
                throw CouchetteError(.badInput, message: "The delta of \"\(message.documentID)\" is not an object", status: 400)
            }
            body = applied
        }
        var revision = ReplicatedRevision(
            documentID: message.documentID, revisionID: message.revisionID, history: message.ancestry,
            isDeleted: message.isDeleted, body: body, attachments: [:])
        try await fetchAttachments(of: &revision, from: connection, local: local)
        return revision
    }

    /// Fetches (`getAttachment`) the content of each attachment stub whose digest is not stored here.
    private static func fetchAttachments(
        of revision: inout ReplicatedRevision, from connection: BLIPConnection, local: BLIPLocalContent
    ) async throws {
        for (name, metadata) in revision.body["_attachments"]?.objectValue ?? [:] {
            guard let digest = revision.digest(ofAttachment: name), !local.holds(digest) else { continue }
            let reply: BLIPMessage
            do {
                reply = try await connection.send(properties: [
                    "Profile": "getAttachment", "digest": digest.description, "docID": revision.documentID,
                ])
            } catch {
                throw closedError
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

    // MARK: - Errors

    /// What a send fails with once the connection closed.
    static let closedError = CouchetteError(.network, message: "The BLIP connection closed")

    /// The error an `ERR` reply stands for: an HTTP status keeps its meaning (401, 403, 404, 409…), others are
    /// network errors.
    static func error(_ error: (domain: String, code: Int, message: String)) -> CouchetteError {
        let reason = error.message.isEmpty ? "\(error.domain) error \(error.code)" : error.message
        guard error.domain == "HTTP" else { return CouchetteError(.network, message: reason) }
        return RemoteDatabaseClient.error(status: error.code, reason: reason)
    }

    /// An `ERR HTTP/<status>` reply to `request` for `error`.
    static func errorReply(to request: BLIPMessage, _ error: any Error) -> BLIPMessage {
        let failure = CouchetteError.wrap(error)
        return request.errorReply(domain: "HTTP", code: failure.status, message: failure.message)
    }
}
