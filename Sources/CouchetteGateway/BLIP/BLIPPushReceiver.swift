import CouchetteBLIP
import CouchetteCore
import Foundation

// MARK: - BLIPPushReceiver

/// What a pushing client sends (spec: blip-sync-protocol.md §3.4, §3.5, §3.6): `proposeChanges` (Couchbase Lite 3),
/// answered with a status per revision, or `changes` (2.x), answered with the known ancestors of the revisions wanted;
/// then a `rev` for each accepted one, stored as `_bulk_docs?new_edits=false` stores a revision made
/// elsewhere — through the sync function, as the connection's user.
struct BLIPPushReceiver: Sendable {
    /// The database and the caller writing.
    let target: AuthorizedDatabase
    /// Where the connection's `rev`s are stored together; nil stores each alone.
    var batcher: BLIPRevisionBatcher? = nil
    /// Counts what is stored; nil for none.
    var log: BLIPSessionLog? = nil

    /// `proposeChanges`: for each `[docID, revID, serverRevID?]`, `0` (send it) when the document is new (or deleted)
    /// or the client knows its current revision, `304` when the revision is already here, else `409` (written
    /// `{"status":409,"rev":current}` when the client asked with `conflictIncludesRev` and may see that revision);
    /// trailing zeros left out.
    func proposeChanges(_ request: BLIPMessage) -> BLIPMessage {
        guard case .array(let entries)? = try? JSONValue(parsing: request.body) else {
            return request.errorReply(domain: "HTTP", code: 400, message: "proposeChanges needs a JSON array")
        }
        let includesRev = request.properties.flag("conflictIncludesRev")
        // The proposal's documents are read at once, each once.
        let snapshots: [String: StoredDocument]
        do {
            snapshots = try target.snapshots(ids: entries.compactMap { $0[0]?.stringValue })
        } catch {
            return BLIPSyncSession.errorReply(to: request, error)
        }
        let answers = entries.map { entry in status(of: entry, in: snapshots, includesRev: includesRev) }
        batcher?.expect(answers.count { $0 == 0 })
        log?.message("proposeChanges: \(entries.count) offered, \(answers.count { $0 == 0 }) wanted")
        return reply(to: request, answers: answers)
    }

    /// `changes` from a pushing client (Couchbase Lite 2.x): for each `[sequence, docID, revID, …]`, the revisions
    /// of that document the gateway has that may be its ancestors (`[]` when none: send it), or `0` when the revision
    /// is already here (`_revs_diff`); trailing zeros left out. A database that allows no conflicts refuses it with
    /// 409 "Use 'proposeChanges' instead", as Sync Gateway does (LiteCore then offers with `proposeChanges`).
    func changes(_ request: BLIPMessage) -> BLIPMessage {
        guard target.database.config.allowConflicts else {
            return request.errorReply(domain: "HTTP", code: 409, message: "Use 'proposeChanges' instead")
        }
        guard case .array(let entries)? = try? JSONValue(parsing: request.body) else {
            return request.errorReply(domain: "HTTP", code: 400, message: "changes needs a JSON array")
        }
        // One `_revs_diff` for the whole message.
        var offered: [String: [String]] = [:]
        for entry in entries {
            guard let id = entry[1]?.stringValue, let revision = entry[2]?.stringValue else { continue }
            offered[id, default: []].append(revision)
        }
        let diff = (try? target.revsDiff(offered)) ?? [:]
        let answers = entries.map { entry -> JSONValue in
            guard let id = entry[1]?.stringValue, let revision = entry[2]?.stringValue, let missing = diff[id],
                missing["missing"]?.arrayValue?.contains(.string(revision)) == true
            else { return 0 }
            return .array(missing["possible_ancestors"]?.arrayValue ?? [])
        }
        batcher?.expect(answers.count { $0.arrayValue != nil })
        return reply(to: request, answers: answers)
    }

    /// The reply to `proposeChanges` or `changes`, with delta sync on saying `deltas: true` (the client may then send
    /// revisions as deltas against ones it knows are here, §4.1).
    private func reply(to request: BLIPMessage, answers: [JSONValue]) -> BLIPMessage {
        request.reply(answers: answers, properties: target.database.config.deltaSync ? ["deltas": "true"] : [:])
    }

    /// One proposal entry's status against its document as read (absent from `snapshots` when new here).
    private func status(
        of entry: JSONValue, in snapshots: [String: StoredDocument], includesRev: Bool
    ) -> JSONValue {
        guard let id = entry[0]?.stringValue, let revision = entry[1]?.stringValue else { return 400 }
        let known = entry[2]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let document = snapshots[id]
        if let parsed = try? RevisionID(parsing: revision), document?.tree.contains(parsed) == true { return 304 }
        guard let document, let winner = document.winner, !winner.isDeleted else { return 0 }
        let current = winner.id.description
        if known == current { return 0 }
        // A current revision the caller cannot see conflicts all the same (its `rev` would get 409), but is not told.
        let visible = target.caller.canSee(document.visibilityChannels(of: winner.id))
        return includesRev && visible ? ["status": 409, "rev": .string(current)] : 409
    }

    /// `rev`: stores the revision with its `history`; with `noconflicts`, only when it descends from the document's
    /// current revision (or the document is absent or deleted), else `ERR HTTP/409`. The sync function's refusal is
    /// `ERR HTTP/403` with its reason. Attachment stubs whose digest the database does not hold are fetched from the
    /// client first (`getAttachment`) and checked against their digest and length.
    func revision(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage {
        // A revision that does not reach the batcher still arrived: it is not to be waited for.
        var queued = false
        defer { if !queued { batcher?.settle() } }
        let properties = request.properties
        guard let id = properties["id"], let revisionText = properties["rev"] else {
            return request.errorReply(domain: "HTTP", code: 400, message: "rev needs id and rev")
        }
        // Local documents do not replicate (and a batched write would take one for a `_local` write).
        guard !id.hasPrefix(LocalDocumentStore.prefix) else {
            return request.errorReply(domain: "HTTP", code: 400, message: "Invalid doc ID")
        }
        do throws(GatewayError) {
            let revision = try DocumentValidation.parseRevision(revisionText)
            let history = try (properties["history"] ?? "").split(separator: ",").map { text throws(GatewayError) in
                try DocumentValidation.parseRevision(String(text))
            }
            // Checked by the write itself, against the document it is stored on; always in a database allowing no
            // conflicts.
            let noConflicts = properties.flag("noconflicts") || !target.database.config.allowConflicts
            var parsed = try Self.parse(request.body)
            if let source = properties["deltaSrc"] {
                parsed = try applyDelta(parsed, against: source, of: id)
            }
            guard case .object(var body) = parsed else {
                throw .badRequest("Document body must be a JSON object")
            }
            body["_id"] = .string(id)
            body["_rev"] = .string(revisionText)
            if properties.flag("deleted") { body["_deleted"] = true }
            // Newest first; it may skip generations where it joins a revision stored here (LiteCore sends at most
            // `maxHistory` revisions, then the one it knows the server has), which the store checks.
            let ancestry = [revision] + history
            let attachmentBodies = try await fetchMissingAttachments(of: &body, documentID: id, from: connection)
            guard attachmentBodies.isEmpty, let batcher else {
                try target.putExisting(
                    id: id, body: .object(body), attachmentBodies: attachmentBodies, noConflicts: noConflicts,
                    history: ancestry)
                log?.notePushed()
                return request.reply()
            }
            queued = true
            let result = await batcher.store(.object(body), history: ancestry, as: target, noConflicts: noConflicts)
            if let error = result["error"] {
                throw GatewayError(
                    statusCode: result["status"]?.intValue.map(Int.init) ?? 500,
                    reason: result["reason"]?.stringValue ?? error.stringValue ?? "error")
            }
            log?.notePushed()
            return request.reply()
        } catch {
            return BLIPSyncSession.errorReply(to: request, error)
        }
    }

    /// A delta's result against revision `source` of document `id` (404 when that revision's body is gone, 400 when
    /// the delta does not apply or delta sync is off).
    private func applyDelta(_ delta: JSONValue, against source: String, of id: String) throws(GatewayError) -> JSONValue {
        guard target.database.config.deltaSync else { throw .badRequest("Delta sync is not enabled") }
        let sourceID = try DocumentValidation.parseRevision(source)
        guard let base = BLIPRevisionBody.properties(of: try target.revision(id: id, revision: sourceID).body) else {
            throw .notFound("missing")
        }
        do {
            return try JSONDelta.apply(delta, to: .object(base))
        } catch {
            throw .badRequest(error.message)
        }
    }

    /// Fetches the bytes of the stubs in `body`'s `_attachments` whose digest is not stored here, and marks them
    /// `follows` so that the write checks and stores them; returns the bytes by attachment name. A stub whose digest
    /// is stored but not among the document's current attachments must be proved (`proveAttachment`): otherwise a
    /// user could take another's attachment into their own document by naming its digest.
    private func fetchMissingAttachments(
        of body: inout [String: JSONValue], documentID: String, from connection: BLIPConnection
    ) async throws(GatewayError) -> [String: [UInt8]] {
        guard case .object(var attachments)? = body["_attachments"] else { return [:] }
        let current = Set(
            ((try? target.revision(id: documentID))?.body["_attachments"]?.objectValue ?? [:]).values
                .compactMap { $0["digest"]?.stringValue })
        var bodies: [String: [UInt8]] = [:]
        for (name, metadata) in attachments {
            guard metadata["stub"] == true, let digest = metadata["digest"]?.stringValue, !current.contains(digest)
            else { continue }
            if let stored = try target.attachmentBytes(digest: digest) {
                try await prove(digest, of: stored, to: connection)
                continue
            }
            let reply: BLIPMessage
            do {
                reply = try await connection.send(
                    properties: ["Profile": "getAttachment", "digest": digest, "docID": documentID])
            } catch {
                throw .serviceUnavailable("The connection closed while fetching attachment \"\(name)\"")
            }
            guard reply.type == .response, case .object(var entry) = metadata else {
                throw .badRequest("The client could not send attachment \"\(name)\"")
            }
            entry["stub"] = nil
            entry["follows"] = true
            attachments[name] = .object(entry)
            bodies[name] = reply.body
        }
        body["_attachments"] = .object(attachments)
        return bodies
    }

    /// Asks the client to prove it holds `data` (§3.9): the SHA-1 of a random nonce's length, the nonce and the
    /// content, as a `sha1-` digest string (base64; lowercase hex accepted too). 403 when the proof is wrong.
    private func prove(_ digest: String, of data: [UInt8], to connection: BLIPConnection) async throws(GatewayError) {
        let nonce = (0..<20).map { _ in UInt8.random(in: 0...255) }
        let reply: BLIPMessage
        do {
            reply = try await connection.send(properties: ["Profile": "proveAttachment", "digest": digest], body: nonce)
        } catch {
            throw .serviceUnavailable("The connection closed while proving an attachment")
        }
        let expected = AttachmentDigest.proof(of: data, nonce: nonce)
        let answer = String(decoding: reply.body, as: UTF8.self)
        let hex = "sha1-" + expected.bytes.map { String(format: "%02x", $0) }.joined()
        guard reply.type == .response, answer == expected.description || answer == hex else {
            throw .forbidden("Incorrect proof for attachment \(digest)")
        }
    }

    private static func parse(_ bytes: [UInt8]) throws(GatewayError) -> JSONValue {
        if bytes.isEmpty { return .object([:]) }
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw .badRequest("Invalid JSON in the revision's body")
        }
    }
}
