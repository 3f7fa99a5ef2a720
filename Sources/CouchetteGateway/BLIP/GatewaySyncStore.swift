import CouchetteBLIP
import CouchetteCore

// MARK: - GatewaySyncStore

/// A database as one user's Couchbase Lite connection syncs with it (``PassiveSyncStore``): checkpoints kept as the
/// local documents `_local/checkpoint/{client}` (as Sync Gateway keeps them), the user's channels fed as changes
/// (``GatewayChangeSource``), pushed revisions stored through the sync function as the user — together, by
/// ``BLIPRevisionBatcher``, as `_bulk_docs?new_edits=false` stores revisions made elsewhere.
struct GatewaySyncStore: PassiveSyncStore {
    /// The database and the caller.
    let target: AuthorizedDatabase
    /// Stores the pushed `rev`s together; nil stores each alone.
    var batcher: BLIPRevisionBatcher? = nil

    var acceptsDeltas: Bool { target.database.config.deltaSync }
    var executor: (any TaskExecutor)? { target.database.executor }

    func failure(of error: any Error) -> (status: Int, reason: String) {
        let failure = error as? GatewayError ?? .internalError("\(error)")
        return (failure.statusCode, failure.reason)
    }

    /// Whether the user who opened the connection still exists, is enabled and has the password they had then: a
    /// password changed or a user deleted on the admin port refuses their open connections' next batch.
    func admitsWork() -> Bool {
        guard let user = target.caller.user, !user.isGuest else { return true }
        guard let current = try? target.database.principals.user(named: user.name) else { return false }
        return !current.disabled && current.passwordHash == user.passwordHash
    }

    // MARK: - Checkpoints

    /// The local document holding a client's checkpoint, as Sync Gateway names it.
    static func checkpointID(_ client: String) -> String { "checkpoint/" + client }

    func checkpoint(client: String) async throws -> (revision: String, body: [String: JSONValue])? {
        let read: Result<JSONValue, GatewayError>
        do throws(GatewayError) {
            read = .success(try await target.localDocument(id: Self.checkpointID(client)))
        } catch {
            read = .failure(error)
        }
        let stored: JSONValue
        switch read {
        case .success(let value): stored = value
        case .failure(let error) where error.statusCode == 404: return nil
        case .failure(let error): throw error
        }
        guard case .object(var members) = stored, let revision = members["_rev"]?.stringValue else {
            throw GatewayError.internalError("unreadable checkpoint")
        }
        members["_id"] = nil
        members["_rev"] = nil
        return (revision, members)
    }

    func saveCheckpoint(_ body: [String: JSONValue], client: String, replacing revision: String?) async throws
        -> String
    {
        var members = body
        members["_rev"] = revision.map(JSONValue.string)
        let saved: Result<String, GatewayError>
        do throws(GatewayError) {
            saved = .success(try await target.putLocalDocument(id: Self.checkpointID(client), body: .object(members)))
        } catch {
            saved = .failure(error)
        }
        switch saved {
        case .success(let revision): return revision
        case .failure(let error) where error.statusCode == 404 || error.statusCode == 409:
            throw GatewayError.conflict("Document update conflict")
        case .failure(let error): throw error
        }
    }

    // MARK: - Serving a pull

    func subscribe(_ subscription: SubChangesRequest, subprotocol: String) throws -> any SyncChangeSource {
        try GatewayChangeSource(subscription, target: target)
    }

    /// Any digest the database holds: the session serves only those of revisions it sent the caller.
    func attachmentContent(digest: String) async throws -> [UInt8]? {
        try await target.attachmentBytes(digest: digest)
    }

    // MARK: - Taking a push

    /// One `_revs_diff` for the whole message. A database that allows no conflicts refuses it with 409 "Use
    /// 'proposeChanges' instead", as Sync Gateway does (LiteCore then offers with `proposeChanges`).
    func revsDiff(_ entries: [OfferedChange?]) async throws -> [RevsDiffAnswer] {
        guard target.database.config.allowConflicts else {
            throw GatewayError.conflict("Use 'proposeChanges' instead")
        }
        var offered: [String: [String]] = [:]
        for case let entry? in entries { offered[entry.documentID, default: []].append(entry.revisionID) }
        let diff = (try? await target.revsDiff(offered)) ?? [:]
        return entries.map { entry in
            guard let entry, let missing = diff[entry.documentID],
                missing["missing"]?.arrayValue?.contains(.string(entry.revisionID)) == true
            else { return .have }
            return .wanted(knownAncestors: (missing["possible_ancestors"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }

    /// `0` (send it) when the document is new (or deleted) or the client knows its current revision, `304` when the
    /// revision is already here, else `409` (with the current revision when asked and the caller may see it); the
    /// proposal's documents read at once, each once.
    func propose(_ changes: [ProposedChange?], includingCurrentRevision: Bool) async throws -> [ProposalAnswer] {
        let snapshots = try await target.snapshots(ids: changes.compactMap { $0?.documentID })
        return changes.map { change in
            guard let change else { return .malformed }
            let document = snapshots[change.documentID]
            if let parsed = try? RevisionID(parsing: change.revisionID), document?.tree.contains(parsed) == true {
                return .have
            }
            guard let document, let winner = document.winner, !winner.isDeleted else { return .send }
            let current = winner.id.description
            if change.serverRevisionID == current { return .send }
            // A current revision the caller cannot see conflicts all the same (its `rev` would get 409), but is not
            // told.
            let visible = target.caller.canSee(document.visibilityChannels(of: winner.id))
            return .conflict(currentRevisionID: includingCurrentRevision && visible ? current : nil)
        }
    }

    /// Local documents do not replicate (and a batched write would take one for a `_local` write); the revision IDs
    /// must parse.
    func admit(_ revision: RevisionMessage) throws {
        guard !revision.documentID.hasPrefix(LocalDocumentStore.prefix) else {
            throw GatewayError.badRequest("Invalid doc ID")
        }
        _ = try Self.ancestry(of: revision)
    }

    /// The revision and its history, parsed (400 for a malformed one).
    private static func ancestry(of revision: RevisionMessage) throws(GatewayError) -> [RevisionID] {
        try revision.ancestry.map { text throws(GatewayError) in try DocumentValidation.parseRevision(text) }
    }

    /// 400 when delta sync is off, 404 when the base revision's body is gone.
    func deltaBase(documentID: String, revisionID: String) throws -> [String: JSONValue] {
        guard target.database.config.deltaSync else { throw GatewayError.badRequest("Delta sync is not enabled") }
        let source = try DocumentValidation.parseRevision(revisionID)
        guard let base = RevisionMessage.properties(of: try target.revision(id: documentID, revision: source).body)
        else { throw GatewayError.notFound("missing") }
        return base
    }

    /// An attachment the document has now needs nothing; one stored for another document must be proved.
    func holding(attachment digest: String, of documentID: String) async throws -> AttachmentHolding {
        let snapshots = (try? await target.snapshots(ids: [documentID])) ?? [:]
        let current = ((try? target.revision(id: documentID, in: snapshots))?.body["_attachments"]?.objectValue ?? [:]).values
        if current.contains(where: { $0["digest"]?.stringValue == digest }) { return .held }
        return try await target.attachmentBytes(digest: digest).map(AttachmentHolding.heldElsewhere) ?? .absent
    }

    /// With the message's `noconflicts` — always in a database allowing no conflicts — the write itself refuses a
    /// revision not descending from the document's current one. A revision with fetched attachments is written alone.
    func store(_ revision: IncomingRevision) async throws {
        let message = revision.message
        let history = try Self.ancestry(of: message)
        let noConflicts = message.noConflicts || !target.database.config.allowConflicts
        var body = revision.body
        body["_id"] = .string(message.documentID)
        body["_rev"] = .string(message.revisionID)
        if message.isDeleted { body["_deleted"] = true }
        if !revision.attachments.isEmpty, case .object(var attachments)? = body["_attachments"] {
            // The fetched content is checked and stored by the write.
            for name in revision.attachments.keys {
                guard case .object(var entry)? = attachments[name] else { continue }
                entry["stub"] = nil
                entry["follows"] = true
                attachments[name] = .object(entry)
            }
            body["_attachments"] = .object(attachments)
        }
        let key = BLIPRevisionBatcher.key(message.documentID, message.revisionID)
        guard revision.attachments.isEmpty, let batcher else {
            defer { batcher?.settle(key) }
            try target.putExisting(
                id: message.documentID, body: .object(body), attachmentBodies: revision.attachments,
                noConflicts: noConflicts, history: history)
            return
        }
        let result = await batcher.store(.object(body), key: key, history: history, as: target, noConflicts: noConflicts)
        if let error = result["error"] {
            throw GatewayError(
                statusCode: result["status"]?.intValue.map(Int.init) ?? 500,
                reason: result["reason"]?.stringValue ?? error.stringValue ?? "error")
        }
    }

    func expectRevisions(_ revisions: [(documentID: String, revisionID: String)]) {
        batcher?.expect(revisions.map { BLIPRevisionBatcher.key($0.documentID, $0.revisionID) })
    }

    func settleRevision(documentID: String?, revisionID: String?) {
        batcher?.settle(documentID.flatMap { id in revisionID.map { BLIPRevisionBatcher.key(id, $0) } })
    }
}
