import CouchetteBLIP
import CouchetteCore
import Foundation

// MARK: - ListenerSyncStore

/// A collection served by a ``URLEndpointListener`` as a BLIP peer syncs with it (``PassiveSyncStore``), so that
/// another Couchette (or a Couchbase Lite 3 peer) replicates with it as with a gateway: checkpoints kept as local
/// documents beside the REST side's, the collection's changes fed in sequence order (``ListenerChangeSource``), and
/// pushed revisions stored as revisions made elsewhere — through the same ``ReplicationPeer`` of the collection the
/// REST endpoints use.
///
/// A listener has no channels: a `subChanges` filter is refused. It announces no delta sync, so a peer sends whole
/// bodies.
struct ListenerSyncStore: PassiveSyncStore {
    /// The served collection.
    let collection: Collection
    /// Whether pushed revisions are refused (403 each).
    let readOnly: Bool

    private var peer: LocalReplicationPeer { LocalReplicationPeer(collection: collection, autoPurge: false) }

    var acceptsDeltas: Bool { false }

    func failure(of error: any Error) -> (status: Int, reason: String) {
        let failure = CouchetteError.wrap(error)
        return (failure.status, failure.message)
    }

    // MARK: - Checkpoints

    /// The local document of `client`'s checkpoint, beside the REST side's checkpoints of the collection.
    private func checkpointID(_ client: String) -> String {
        peer.localID("checkpoint/" + client)
    }

    func checkpoint(client: String) throws -> (revision: String, body: [String: JSONValue])? {
        guard let stored = try collection.database.localDocument(withID: checkpointID(client)) else { return nil }
        let revision = stored["_rev"] as? String ?? ""
        let body = try JSONValue(foundationObject: stored.filter { !$0.key.hasPrefix("_") })
        return (revision, body.objectValue ?? [:])
    }

    func saveCheckpoint(_ body: [String: JSONValue], client: String, replacing revision: String?) throws -> String {
        let id = checkpointID(client)
        let database = collection.database
        var saved = ""
        try database.inBatch {
            let current = try database.localDocument(withID: id)?["_rev"] as? String
            guard current == revision else { throw CouchetteError(.conflict, message: "Document update conflict") }
            var properties = body.mapValues(DocumentValues.value(from:))
            properties["_rev"] = current
            saved = try database.putLocalDocument(properties, withID: id)
        }
        return saved
    }

    // MARK: - Serving a pull

    func subscribe(_ subscription: SubChangesRequest, subprotocol: String) throws -> any SyncChangeSource {
        if subscription.filter != nil {
            throw CouchetteError(.badInput, message: "a listener has no channels or filters", status: 400)
        }
        return ListenerChangeSource(subscription, collection: collection)
    }

    func attachmentContent(digest: String) throws -> [UInt8]? {
        guard let parsed = try? AttachmentDigest(parsing: digest) else { return nil }
        return (try? collection.database.currentBlobStore?.data(for: parsed)).map { Array($0) }
    }

    // MARK: - Taking a push

    /// For each entry, the revisions of that document held here that may be its ancestors (`[]` when none: send it),
    /// or `0` when the revision is here.
    func revsDiff(_ entries: [OfferedChange?]) async throws -> [RevsDiffAnswer] {
        var offered: [String: [String]] = [:]
        for case let entry? in entries { offered[entry.documentID, default: []].append(entry.revisionID) }
        let missing = try await peer.revsDiff(offered)
        return entries.map { entry in
            guard let entry, let diff = missing[entry.documentID], diff.missing.contains(entry.revisionID) else {
                return .have
            }
            return .wanted(knownAncestors: diff.possibleAncestors)
        }
    }

    /// `0` (send it) when the document is absent or deleted here or its current revision is the one the pusher
    /// knows, `304` when the revision is here, else `409`.
    func propose(_ changes: [ProposedChange?], includingCurrentRevision: Bool) throws -> [ProposalAnswer] {
        try changes.map { change in
            guard let change else { return .malformed }
            if try collection.missingRevisions([change.documentID: [change.revisionID]])[change.documentID] == nil {
                return .have
            }
            guard let current = try collection.document(id: change.documentID)?.revisionID else { return .send }
            return change.serverRevisionID == current ? .send : .conflict(currentRevisionID: nil)
        }
    }

    /// A read-only listener refuses every `rev` (403).
    func admit(_ revision: RevisionMessage) throws {
        if readOnly { throw CouchetteError(.forbidden, message: "The listener is read-only") }
    }

    func deltaBase(documentID: String, revisionID: String) async throws -> [String: JSONValue] {
        throw CouchetteError(.badInput, message: "Delta sync is not enabled", status: 400)
    }

    /// Content held here is shared by whoever may replicate with the listener: nothing to prove.
    func holding(attachment digest: String, of documentID: String) throws -> AttachmentHolding {
        guard let parsed = try? AttachmentDigest(parsing: digest),
            collection.database.currentBlobStore?.contains(parsed) == true
        else { return .absent }
        return .held
    }

    /// With `noconflicts`, only when it descends from the document's current revision (else 409).
    func store(_ revision: IncomingRevision) async throws {
        let message = revision.message
        if message.noConflicts, let current = try collection.document(id: message.documentID),
            let currentID = current.revisionID, !message.ancestry.contains(currentID)
        {
            throw CouchetteError(.conflict, message: "Document update conflict")
        }
        var attachments: [String: Blob] = [:]
        for (name, content) in revision.attachments {
            let type = revision.body["_attachments"]?[name]?["content_type"]?.stringValue ?? "application/octet-stream"
            attachments[name] = Blob(contentType: type, data: Data(content))
        }
        let replicated = ReplicatedRevision(
            documentID: message.documentID, revisionID: message.revisionID, history: message.ancestry,
            isDeleted: message.isDeleted, body: revision.body, attachments: attachments)
        if let error = try await peer.store([replicated]).first?.error { throw error }
    }
}
