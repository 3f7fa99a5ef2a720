import CouchetteCore
import Foundation

// MARK: - AuthorizedDatabase

/// One database as one caller may use it: the facade request handlers go through (Sync Gateway's
/// `DatabaseCollectionWithUser`). Reads see what the caller's channels allow, writes run the sync function as the
/// caller, administrative operations require the admin; the storage stays behind it.
///
/// ```swift
/// let alice = AuthorizedDatabase(database: todo, caller: .user(user, channels: ["lists.a"]))
/// let revision = try await alice.put(id: "a", body: ["type": "task-list", "owner": "alice"])
/// let body = try alice.revision(id: "a").json     // 403 for a document outside alice's channels
/// ```
public struct AuthorizedDatabase: Sendable {
    /// The database.
    public let database: GatewayDatabase
    /// Who is asking.
    public let caller: Caller

    /// Creates the facade of `database` for `caller`.
    public init(database: GatewayDatabase, caller: Caller) {
        self.database = database
        self.caller = caller
    }

    /// The database's name.
    public var name: String { database.name }

    private var documents: DocumentStore { database.documents }

    /// Throws 403 unless the caller is the admin (defence in depth: admin endpoints are served on the admin
    /// listener only).
    public func requireAdmin() throws(GatewayError) {
        guard caller.isAdmin else { throw .forbidden("admin required") }
    }

    // MARK: - Reading documents

    /// A revision (the current one when `revision` is nil) as the caller may see it
    /// (``DocumentStore/revision(id:revision:as:options:in:)``).
    ///
    /// - Parameter snapshots: Documents read at once by ``snapshots(ids:)``, for requests reading many.
    public func revision(
        id: String, revision: RevisionID? = nil, options: ReadOptions = ReadOptions(),
        in snapshots: [String: StoredDocument]? = nil
    ) throws(GatewayError) -> DocumentRevision {
        try documents.revision(id: id, revision: revision, as: caller, options: options, in: snapshots)
    }

    /// `open_revs` as the caller may see them (``DocumentStore/openRevisionResults(id:revisions:as:options:latest:)``).
    public func openRevisionResults(
        id: String, revisions: [RevisionID]?, options: ReadOptions = ReadOptions(), latest: Bool = false
    ) throws(GatewayError) -> [OpenRevision] {
        try documents.openRevisionResults(id: id, revisions: revisions, as: caller, options: options, latest: latest)
    }

    /// The stored documents with these IDs, read in one statement (holding no thread while a storage across a network
    /// answers), for ``revision(id:revision:options:in:)`` and
    /// ``revisionText(id:revision:options:in:)`` (current bodies kept as their stored text until a read parses them).
    func snapshots(ids: [String]) async throws(GatewayError) -> [String: StoredDocument] {
        try await database.storage.fetchDocuments(ids: ids, winnerAsText: true)
    }

    /// A read's JSON text spliced from the stored body, when the caller may see it and the read adds no attachment
    /// bodies (``DocumentStore/revisionText(id:revision:as:options:in:)``); nil otherwise: read the revision.
    func revisionText(
        id: String, revision: RevisionID?, options: ReadOptions, in snapshots: [String: StoredDocument]
    ) -> [UInt8]? {
        documents.revisionText(id: id, revision: revision, as: caller, options: options, in: snapshots)
    }

    /// The current revision's stored body, when a read of `revision` by the caller would send it as it is
    /// (``DocumentStore/storedText(of:revision:as:)``), with the history `options` send.
    func storedText(id: String, revision: RevisionID?, options: ReadOptions, in snapshots: [String: StoredDocument]?)
        -> (text: [UInt8], history: [RevisionID])?
    {
        guard let (document, node, text) = documents.storedText(of: snapshots?[id], revision: revision, as: caller)
        else { return nil }
        return (text, documents.sentHistory(of: node, in: document, options: options))
    }

    /// The history a replication sends with revision `revision` of document `id`, newest first from the revision
    /// (``DocumentStore/sentHistory(of:in:options:)``: a gap where it was joined to an older revision is kept, as a
    /// BLIP `history` can tell of it), read from `snapshots`; nil when the revision is not there.
    func sentHistory(
        id: String, revision: RevisionID, options: ReadOptions, in snapshots: [String: StoredDocument]?
    ) -> [RevisionID]? {
        guard let document = snapshots?[id], let node = document.tree[revision] else { return nil }
        return documents.sentHistory(of: node, in: document, options: options)
    }

    /// An attachment's bytes and metadata, if the caller may see its revision.
    public func attachment(named name: String, documentID: String, revision: RevisionID? = nil)
        async throws(GatewayError) -> AttachmentContent
    {
        try await documents.attachment(named: name, documentID: documentID, revision: revision, as: caller)
    }

    /// An attachment's bytes by digest, for a BLIP `getAttachment`: the connection must have checked that it sent
    /// the caller a revision naming it (its attachment allowance); nil when the database does not hold it.
    func attachmentBytes(digest: String) async throws(GatewayError) -> [UInt8]? {
        try await database.storage.fetchAttachment(digest: digest)
    }

    // MARK: - Writing documents

    /// Saves a new revision as the caller (``DocumentStore/put(id:body:parentRevision:attachmentBodies:user:)``).
    ///
    /// The document is read and the revision stored holding no thread while a storage across a network answers.
    @discardableResult
    public func put(
        id: String, body: JSONValue, parentRevision: String? = nil, attachmentBodies: [String: [UInt8]] = [:]
    ) async throws(GatewayError) -> RevisionID {
        // Checked before the read: a bad ID or body is a 400 whatever the storage's state.
        let edit = try documents.putEdit(
            id: id, body: body, parentRevision: parentRevision, attachmentBodies: attachmentBodies)
        let snapshots = try await database.storage.fetchDocuments(ids: [id], winnerAsText: false)
        let write = try documents.prepare(id: id, snapshots: snapshots, documents.routed(edit, user: caller.syncContext))
        return try await documents.commit(write)
    }

    /// Inserts a revision made elsewhere as the caller
    /// (``DocumentStore/putExisting(id:body:attachmentBodies:user:noConflicts:history:)``).
    @discardableResult
    public func putExisting(
        id: String, body: JSONValue, attachmentBodies: [String: [UInt8]] = [:], noConflicts: Bool = false,
        history: [RevisionID]? = nil
    ) throws(GatewayError) -> RevisionID {
        try documents.putExisting(
            id: id, body: body, attachmentBodies: attachmentBodies, user: caller.syncContext, noConflicts: noConflicts,
            history: history)
    }

    /// `_bulk_docs` as the caller: one result per document, the sync function run once for the batch. With
    /// `noConflicts`, revisions made elsewhere (`newEdits` false) may not make conflicts.
    public func bulkDocs(
        _ bodies: [JSONValue], newEdits: Bool, noConflicts: Bool = false, histories: [[RevisionID]?] = []
    ) async -> [JSONValue] {
        await documents.bulkDocs(
            bodies, newEdits: newEdits, user: caller.syncContext, noConflicts: noConflicts, histories: histories)
    }

    /// Adds or replaces an attachment as the caller, making a new revision.
    @discardableResult
    public func putAttachment(
        named name: String, documentID: String, data: [UInt8], contentType: String, parentRevision: String?
    ) throws(GatewayError) -> RevisionID {
        try documents.putAttachment(
            named: name, documentID: documentID, data: data, contentType: contentType, parentRevision: parentRevision,
            as: caller)
    }

    /// Removes an attachment as the caller, making a new revision.
    @discardableResult
    public func deleteAttachment(named name: String, documentID: String, parentRevision: String)
        throws(GatewayError) -> RevisionID
    {
        try documents.deleteAttachment(named: name, documentID: documentID, parentRevision: parentRevision, as: caller)
    }

    /// `_revs_diff`: for each document, the offered revisions missing here.
    public func revsDiff(_ offered: [String: [String]]) async throws(GatewayError) -> JSONValue {
        try await documents.revsDiff(offered)
    }

    /// CouchDB's `_missing_revs`.
    public func missingRevisions(_ offered: [String: [String]]) async throws(GatewayError) -> JSONValue {
        try await documents.missingRevisions(offered)
    }

    // MARK: - Local documents

    /// A `_local` document's body (replication checkpoints; not replicated, not filtered by channels).
    public func localDocument(id: String) async throws(GatewayError) -> JSONValue {
        try await LocalDocumentStore(storage: database.storage).get(id: id)
    }

    /// Saves a `_local` document; returns its new revision.
    public func putLocalDocument(id: String, body: JSONValue) async throws(GatewayError) -> String {
        try await LocalDocumentStore(storage: database.storage).put(id: id, body: body)
    }

    /// Deletes a `_local` document at `revision`.
    public func deleteLocalDocument(id: String, revision: String?) async throws(GatewayError) {
        try await LocalDocumentStore(storage: database.storage).delete(id: id, revision: revision)
    }

    // MARK: - Sync function preview (admin)

    /// The sync function's `oldDoc` for a document: its current revision's body with `_id` (`{_id, _deleted}` for
    /// a tombstone), nil when absent.
    public func currentSyncInput(id: String) throws(GatewayError) -> JSONValue? {
        try requireAdmin()
        guard let stored = try database.storage.document(id: id), let winner = stored.winner else { return nil }
        if winner.isDeleted { return ["_id": .string(id), "_deleted": true] }
        guard var body = winner.body?.objectValue else { return nil }
        body["_id"] = .string(id)
        return .object(body)
    }

    /// What the sync function sees of a user (`requireUser`, `requireRole`, `requireAccess`).
    ///
    /// - Throws: 404 `missing user NAME`.
    public func syncContext(ofUser name: String) throws(GatewayError) -> SyncUserContext? {
        try requireAdmin()
        guard let user = try database.storage.user(named: name) else { throw .notFound("missing user \(name)") }
        return Caller.user(user, channels: try database.storage.allChannels(of: user)).syncContext
    }

    /// Up to `count` document IDs picked at random among the first 10,000 (fewer when the database has fewer).
    public func randomDocumentIDs(count: Int) throws(GatewayError) -> [String] {
        try requireAdmin()
        let ids = try database.storage.documentIDs(from: nil, to: nil, limit: 10_000)
        return Array(ids.shuffled().prefix(max(0, count)))
    }

    /// What deploying `edited` in place of `deployed` would change for the stored documents' current revisions (as
    /// a resync runs them: as the admin), over every document (`sample` nil) or `sample` random ones. Documents are
    /// read and routed 500 at a time, each function called once per batch.
    public func syncImpact(of edited: any ChannelRouter, against deployed: any ChannelRouter, sample: Int?)
        throws(GatewayError) -> SyncImpact
    {
        try requireAdmin()
        var impact = SyncImpact()
        func compare(_ ids: [String]) throws(GatewayError) {
            let stored = try database.storage.documents(ids: ids)
            var requests: [(id: String, request: RoutingRequest)] = []
            for id in ids {
                guard let document = stored[id], let winner = document.winner else { continue }
                requests.append((id, documents.routingRequest(of: winner.id, in: document)))
            }
            let before = deployed.route(batch: requests.map(\.request), user: nil)
            let after = edited.route(batch: requests.map(\.request), user: nil)
            for (index, entry) in requests.enumerated() {
                impact.add(id: entry.id, deployed: before[index], edited: after[index])
            }
        }
        if let sample {
            try compare(try randomDocumentIDs(count: sample))
            return impact
        }
        try database.storage.forEachDocumentIDPage { ids throws(GatewayError) in
            try compare(ids)
            return true
        }
        return impact
    }

    /// The sync function's arguments for a stored document's current revision (as a resync runs it), nil when the
    /// document does not exist.
    public func storedSyncInput(id: String) throws(GatewayError) -> RoutingRequest? {
        try requireAdmin()
        guard let stored = try database.storage.document(id: id), let winner = stored.winner else { return nil }
        return documents.routingRequest(of: winner.id, in: stored)
    }
}
