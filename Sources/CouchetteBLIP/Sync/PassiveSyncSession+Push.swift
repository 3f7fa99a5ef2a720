import CouchetteCore

// MARK: - Taking a push

extension PassiveSyncSession {
    /// `proposeChanges` (Couchbase Lite 3, §3.5): for each `[docID, revID, serverRevID?]`, the store's answer (``ProposalAnswer``),
    /// trailing zeros left out; the revisions asked for are expected.
    func proposeChanges(_ request: BLIPMessage) async throws -> BLIPMessage {
        let entries = try ProposedChange.entries(in: request.body)
        let answers = try await store.propose(
            entries, includingCurrentRevision: request.properties.flag("conflictIncludesRev"))
        let wanted = zip(entries, answers).compactMap { entry, answer in
            answer == .send ? entry.map { ($0.documentID, $0.revisionID) } : nil
        }
        store.expectRevisions(wanted)
        observer?.message("proposeChanges: \(entries.count) offered, \(wanted.count) wanted")
        return reply(to: request, answers: answers.map(\.json))
    }

    /// `changes` from a pushing client (Couchbase Lite 2.x, §3.4): for each `[sequence, docID, revID, …]`, the
    /// revisions of that document the store has that may be its ancestors (`[]` when none: send it), or `0` when the
    /// revision is already there (`_revs_diff`); trailing zeros left out.
    func changes(_ request: BLIPMessage) async throws -> BLIPMessage {
        let entries = try OfferedChange.entries(in: request.body)
        let answers = try await store.revsDiff(entries)
        store.expectRevisions(
            zip(entries, answers).compactMap { entry, answer in
                answer == .have ? nil : entry.map { ($0.documentID, $0.revisionID) }
            })
        return reply(to: request, answers: answers.map(\.json))
    }

    /// The reply to `proposeChanges` or `changes`, saying `deltas: true` when the store takes deltas (§4.1).
    private func reply(to request: BLIPMessage, answers: [JSONValue]) -> BLIPMessage {
        request.reply(answers: answers, properties: store.acceptsDeltas ? ["deltas": "true"] : [:])
    }

    /// `rev` (§3.6): applies a delta (`deltaSrc`) to its base in the store, fetches the attachments the store lacks
    /// (`getAttachment`, checked against their digest) or has the client prove those held for other documents
    /// (`proveAttachment`), then stores the revision; the store's refusal (a sync function's 403, a conflict's 409)
    /// is the reply's error.
    func revision(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage {
        // A revision that does not reach the store still arrived: it is not to be waited for.
        var reachedStore = false
        defer {
            if !reachedStore {
                store.settleRevision(documentID: request.properties["id"], revisionID: request.properties["rev"])
            }
        }
        do {
            var message = try RevisionMessage(request)
            try store.admit(message)
            let received = try message.bodyObject()
            // The body may say it is a tombstone instead of the `deleted` property (§3.6).
            if received["_deleted"] == true { message.isDeleted = true }
            var body = RevisionMessage.properties(of: .object(received)) ?? [:]
            if let source = message.deltaSource {
                let base = try await store.deltaBase(documentID: message.documentID, revisionID: source)
                do {
                    body = RevisionMessage.properties(of: try JSONDelta.apply(.object(body), to: .object(base))) ?? [:]
                } catch {
                    throw BLIPError.refused(status: 400, reason: error.message)
                }
            }
            let attachments = try await fetchAttachments(of: body, documentID: message.documentID, from: connection)
            reachedStore = true
            try await store.store(IncomingRevision(message: message, body: body, attachments: attachments))
            observer?.notePushed()
            return request.reply()
        } catch {
            return errorReply(to: request, error)
        }
    }

    /// The content of the stubs in `body`'s `_attachments` that the store does not hold, by name, fetched from the
    /// client; a stub held for another document is proved instead.
    private func fetchAttachments(
        of body: [String: JSONValue], documentID: String, from connection: BLIPConnection
    ) async throws -> [String: [UInt8]] {
        guard case .object(let attachments)? = body["_attachments"] else { return [:] }
        var fetched: [String: [UInt8]] = [:]
        for (name, metadata) in attachments {
            guard metadata["stub"] == true, let digest = metadata["digest"]?.stringValue else { continue }
            switch try await store.holding(attachment: digest, of: documentID) {
            case .held:
                continue
            case .heldElsewhere(let content):
                try await prove(digest, of: content, to: connection)
            case .absent:
                let reply: BLIPMessage
                do {
                    reply = try await connection.send(
                        properties: ["Profile": "getAttachment", "digest": digest, "docID": documentID])
                } catch {
                    throw BLIPError.refused(
                        status: 503, reason: "The connection closed while fetching attachment \"\(name)\"")
                }
                guard reply.type == .response else {
                    throw BLIPError.refused(status: 400, reason: "The client could not send attachment \"\(name)\"")
                }
                guard let expected = try? AttachmentDigest(parsing: digest), expected.matches(reply.body) else {
                    throw BLIPError.refused(
                        status: 400, reason: "Attachment \"\(name)\" of \"\(documentID)\" does not match its digest")
                }
                fetched[name] = reply.body
            }
        }
        return fetched
    }

    /// Asks the client to prove it holds `content` (§3.9): the SHA-1 of a random nonce's length, the nonce and the
    /// content, as a `sha1-` digest string (base64; lowercase hex accepted too). 403 when the proof is wrong.
    private func prove(_ digest: String, of content: [UInt8], to connection: BLIPConnection) async throws {
        let nonce = (0..<20).map { _ in UInt8.random(in: 0...255) }
        let reply: BLIPMessage
        do {
            reply = try await connection.send(properties: ["Profile": "proveAttachment", "digest": digest], body: nonce)
        } catch {
            throw BLIPError.refused(status: 503, reason: "The connection closed while proving an attachment")
        }
        let expected = AttachmentDigest.proof(of: content, nonce: nonce)
        let answer = String(decoding: reply.body, as: UTF8.self)
        guard reply.type == .response, answer == expected.description || answer == "sha1-" + expected.hexString else {
            throw BLIPError.refused(status: 403, reason: "Incorrect proof for attachment \(digest)")
        }
    }
}
