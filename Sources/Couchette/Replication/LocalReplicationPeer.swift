import CouchetteCore
import Foundation

// MARK: - LocalReplicationPeer

/// A local collection as a replication peer (``DatabaseEndpoint``, and the local side of every replication).
///
/// Sequences are the collection's own, as decimal strings; checkpoints are local documents of its database named
/// after the replication and collection.
struct LocalReplicationPeer: ReplicationPeer {
    let collection: Collection
    /// Resolves the conflicts that stored revisions make; nil keeps them.
    var conflictResolver: (any ConflictResolverProtocol)? = nil
    /// Purge a document when the source says the reader lost access to it (``ReplicatorConfiguration/enableAutoPurge``).
    var autoPurge = true

    var identity: String { Self.identity(of: collection.database, collectionFullName: collection.fullName) }

    /// The identity of a collection of `database`, whether or not it exists yet.
    static func identity(of database: Database, collectionFullName: String) -> String {
        "\(database.storedPublicUUID)/\(collectionFullName)"
    }

    func changes(since: String?, limit: Int) async throws -> ReplicationChanges {
        let start = since.flatMap(UInt64.init) ?? 0
        let entries = try collection.changes(since: start, limit: limit, includeConflicts: true)
        var order: [String] = []
        var byDocument: [String: ReplicationChange] = [:]
        for entry in entries {
            if byDocument[entry.documentID] == nil {
                order.append(entry.documentID)
                byDocument[entry.documentID] = ReplicationChange(
                    documentID: entry.documentID, revisionIDs: [], isDeleted: entry.isDeletion, sequence: entry.sequence)
            }
            byDocument[entry.documentID]?.revisionIDs.append(entry.revisionID)
        }
        return ReplicationChanges(
            changes: order.compactMap { byDocument[$0] }, lastSequence: entries.map(\.sequence).max().map(String.init))
    }

    func revsDiff(_ revisions: [String: [String]]) async throws -> [String: MissingRevisions] {
        try collection.missingRevisions(revisions)
    }

    /// Reads the revisions in one transaction; attachment content is read from the blob store when sent. Blobs go
    /// as `blob_` attachments (``BlobAttachments``), each with the `revpos` of the oldest ancestor still known to
    /// hold it, so a peer that has that ancestor is not sent it again.
    func revisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        guard !wanted.isEmpty else { return [] }
        let ancestors = WantedRevision.knownAncestors(of: wanted)
        let store = collection.database.currentBlobStore
        return try collection.revisionsWithHistory(wanted).map { saved, history, ancestorBodies in
            var revision = ReplicatedRevision(
                documentID: saved.documentID, revisionID: saved.id.description, history: history,
                isDeleted: saved.isDeletion, body: saved.isDeletion ? [:] : (saved.body?.objectValue ?? [:]),
                attachments: [:])
            // `_removed` is a remote's word about access; a revision stored with it by an older build is no such word.
            revision.body["_removed"] = nil
            let blobs = BlobAttachments.expose(&revision.body) { name, digest in
                Self.revpos(of: name, digest: digest, history: history, ancestorBodies: ancestorBodies)
            }
            for name in revision.attachmentsToSend(knownAncestors: ancestors[saved.documentID] ?? []) {
                if let blob = blobs[name] {
                    // Content this database lacks stays a stub: the receiver decides what that means.
                    guard let digest = blob["digest"]?.stringValue.flatMap({ try? AttachmentDigest(parsing: $0) }),
                        store?.contains(digest) == true
                    else { continue }
                    revision.attachments[name] = try? Blob(
                        properties: blob.mapValues(DocumentValues.value(from:)), store: store)
                } else {
                    revision.attachments[name] = saved.attachment(named: name)
                }
            }
            return revision
        }
    }

    /// The generation since which a revision's history holds the blob `digest` at the same place (attachment
    /// `name`): the oldest of the consecutive ancestors whose kept bodies hold it there, else the revision's own.
    /// (A blob moved elsewhere counts as new: peers that resolve stubs by name would not find it.)
    static func revpos(
        of name: String, digest: String, history: [String], ancestorBodies: [String: JSONValue]
    ) -> Int {
        var revpos = ReplicatedRevision.generation(of: history[0]) ?? history.count
        for ancestor in history.dropFirst() {
            guard let body = ancestorBodies[ancestor]?.objectValue,
                BlobAttachments.references(in: body)[name]?["digest"]?.stringValue == digest,
                let generation = ReplicatedRevision.generation(of: ancestor)
            else { break }
            revpos = generation
        }
        return revpos
    }

    /// Stores a batch in one transaction (conflicts are resolved after it, each in its own).
    func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
        // Keeping conflicts needs no work after storing.
        let resolver = conflictResolver.flatMap { $0 is ConflictResolver.KeepConflicts ? nil : $0 }
        var results: [ReplicationWriteResult] = []
        var conflicted: [ReplicatedRevision] = []
        try collection.database.inBatch {
            for revision in revisions {
                var result = ReplicationWriteResult(
                    documentID: revision.documentID, revisionID: revision.revisionID, isDeleted: revision.isDeleted,
                    isAccessRemoval: revision.isAccessRemoval)
                if revision.isAccessRemoval {
                    // Lost access: the document goes (when auto-purging), the stub is never stored.
                    if autoPurge {
                        do {
                            try collection.purge(id: revision.documentID)
                        } catch let error as CouchetteError where error.code == .notFound {}  // never pulled here
                    }
                    results.append(result)
                    continue
                }
                do {
                    if try store(revision), resolver != nil { conflicted.append(revision) }
                } catch let error as CouchetteError where Self.refusesOnlyTheDocument(error) {
                    // Raised before anything of the document is written: the rest of the batch goes on.
                    result.error = error
                }
                results.append(result)
            }
        }
        if let resolver {
            for revision in conflicted {
                try resolveConflict(of: revision.documentID, pulled: revision.revisionID, with: resolver)
            }
        }
        return results
    }

    /// Stores one revision; returns whether it was new here.
    private func store(_ revision: ReplicatedRevision) throws -> Bool {
        if !revision.attachments.isEmpty {
            guard let store = collection.database.currentBlobStore else {
                throw CouchetteError(.notOpen, message: "The database is closed")
            }
            // The stubs keep their digests and revpos; the content goes into this database's store.
            for blob in revision.attachments.values { try blob.install(into: store) }
        }
        // Blobs that came as `blob_` attachments are back in the blob store: the body keeps their dictionaries only.
        var body = revision.body
        BlobAttachments.fold(&body)
        // JSON values go into the body as they are (no round trip through Foundation types).
        var properties: [String: Any] = body.mapValues { $0 }
        if revision.isDeleted { properties["_deleted"] = true }
        return try collection.putExistingRevision(
            documentID: revision.documentID, properties: properties, revisionHistory: revision.history)
    }

    /// Errors about one document's content, found before it is written.
    private static func refusesOnlyTheDocument(_ error: CouchetteError) -> Bool {
        [.badInput, .conflict, .forbidden, .notFound].contains(error.code)
    }

    func checkpoint(id: String) async throws -> [String: JSONValue]? {
        try storedCheckpoint(id: id)
    }

    /// The checkpoint saved under `id`, read synchronously.
    func storedCheckpoint(id: String) throws -> [String: JSONValue]? {
        guard let properties = try collection.database.localDocument(withID: localID(id)) else { return nil }
        return try JSONValue(foundationObject: properties.filter { !$0.key.hasPrefix("_") }).objectValue
    }

    func saveCheckpoint(_ checkpoint: [String: JSONValue], id: String) async throws {
        var properties = checkpoint.mapValues(DocumentValues.value(from:))
        if let current = try collection.database.localDocument(withID: localID(id)) { properties["_rev"] = current["_rev"] }
        try collection.database.putLocalDocument(properties, withID: localID(id))
    }

    func waitForChanges(since: String?, timeout: Duration) async throws {
        let changes = collection.changes()  // listening before looking, so that no change falls in between
        if !(try collection.changes(since: since.flatMap(UInt64.init) ?? 0, limit: 1).isEmpty) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Lets `resolver` choose when the pulled revision left two live branches (or deleted one branch while another
    /// lives): the losing leaves get tombstones, and a resolution other than the pulled revision itself — a merge, or
    /// the local revision kept as it is — is saved as a new revision on top of the pulled one, as Couchbase Lite does:
    /// it then descends from the other side's revision, which a server allowing no conflicts requires of a push.
    private func resolveConflict(
        of documentID: String, pulled: String, with resolver: any ConflictResolverProtocol
    ) throws {
        guard let remote = try collection.revision(documentID: documentID, revisionID: pulled) else { return }
        let others = try collection.leafRevisions(documentID: documentID).filter {
            !$0.isDeletion && $0.revisionID != pulled
        }
        guard let local = others.first else { return }
        let kept = resolver.resolve(
            conflict: Conflict(documentID: documentID, localDocument: local.toDocument(), remoteDocument: remote.toDocument()))
        let live = remote.isDeletion ? others : [remote] + others
        // A mutable document is a merge even when made from one side (`local.toMutable()` keeps its revision ID); so
        // is a live local revision kept over a live pulled one.
        let isMerge = kept.map { kept in
            kept is MutableDocument || !live.contains { $0.revisionID == kept.revisionID }
                || (!remote.isDeletion && kept.revisionID != remote.revisionID)
        } ?? false
        let keptID = isMerge ? nil : kept?.revisionID
        _ = try collection.database.inTransaction {
            var base: SavedRevision?
            if let kept, isMerge {
                // A merge: saved on the pulled branch (or the local one when the pulled revision is a deletion).
                base = remote.isDeletion ? local : remote
                _ = try collection.saveRevision(
                    Self.renumberingRevpos(of: kept.toDictionary(), notIn: base), documentID: documentID,
                    parentRevisionID: base?.revisionID, allowConflict: true)
            }
            for leaf in live where leaf.revisionID != keptID && leaf.revisionID != base?.revisionID {
                _ = try collection.saveRevision(
                    [:], documentID: documentID, parentRevisionID: leaf.revisionID, isDeletion: true, allowConflict: true)
            }
            return true
        }
    }

    /// `body` with the `revpos` of its `_attachments` entries whose digest `base` lacks set to the generation of a
    /// revision saved on top of `base`: a kept local revision's stubs carry its branch's `revpos`, which would tell a
    /// peer holding `base` that it has them already.
    static func renumberingRevpos(of body: [String: Any], notIn base: SavedRevision?) -> [String: Any] {
        guard let attachments = body["_attachments"] as? [String: Any] else { return body }
        let generation = (base?.revisionID.flatMap { try? RevisionID(parsing: $0) }?.generation ?? 0) + 1
        let baseDigests = Set(
            ((base?.properties?["_attachments"] as? [String: Any]) ?? [:]).values.compactMap {
                ($0 as? [String: Any])?["digest"] as? String
            })
        var cleared = body
        cleared["_attachments"] = attachments.mapValues { entry -> Any in
            guard var metadata = entry as? [String: Any], let digest = metadata["digest"] as? String,
                !baseDigests.contains(digest)
            else { return entry }
            metadata["revpos"] = generation
            return metadata
        }
        return cleared
    }

    /// Checkpoints of one database are per collection.
    func localID(_ id: String) -> String { "\(id)-\(collection.fullName)" }
}
