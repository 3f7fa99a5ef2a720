import CouchetteCore
import Foundation

/// The storage under one gateway database: documents with their revision trees and channels, a
/// database-wide sequence, `_local` documents and attachments by digest.
///
/// Implementations: ``SQLiteGatewayStorage`` (`walrus:` in memory, `walrus:DIR`, `sqlite:PATH`) for one gateway
/// process, and ``PostgresGatewayStorage`` (`postgres://…`), which several gateway nodes serve at once. Every call is
/// thread-safe. The calls are synchronous; those requests make also have `async` twins (`fetch…`, `submit…`),
/// through which a storage across a network holds no thread while it answers (a storage in the process answers them
/// in place). The same storage keeps the database's users, roles and sessions (``PrincipalStore``).
/// Opened by ``StorageLocation/openStorage(databaseName:)``.
public protocol GatewayStorage: PrincipalStore, AnyObject {
    /// The last sequence given out.
    var lastSequence: UInt64 { get throws(GatewayError) }

    /// A document, or nil when it was never stored (or was purged).
    func document(id: String) throws(GatewayError) -> StoredDocument?

    /// The stored documents among `ids`, read at one point in time (absent ones are left out): the snapshots of a
    /// `_bulk_docs` request, read at once rather than each waiting for concurrent writes.
    ///
    /// - Parameter winnerAsText: Leave each current revision's body as its stored text
    ///   (``StoredDocument/winnerText``), for reads that send it on as it is (`_bulk_get`, BLIP `rev`).
    func documents(ids: [String], winnerAsText: Bool) throws(GatewayError) -> [String: StoredDocument]

    /// The leaf revisions of the stored documents among `ids`, each in winning order (the winner first), read at
    /// one point in time without their bodies: a `_changes` page with `style=all_docs` (absent ones are left out).
    func leafRevisions(ids: [String]) throws(GatewayError) -> [String: [RevisionID]]

    /// Atomically reads a document, lets `transform` change it, and stores the result with the next
    /// sequence. Concurrent updates of one document are serialized: `transform` always sees the latest.
    ///
    /// - Parameter transform: Gets the current document (nil if absent) and the storage as the update's transaction
    ///   sees it, and returns the new document, or nil to change nothing. Its errors abort the update and are
    ///   rethrown. Attachments it stores through that storage (``putAttachment(_:)``) are part of the update's
    ///   transaction: committed with it or not at all.
    /// - Returns: The stored document (with its new sequence), or nil when `transform` changed nothing.
    @discardableResult
    func update(
        documentID: String, _ transform: (StoredDocument?, any GatewayStorage) throws(GatewayError) -> StoredDocument?
    ) throws(GatewayError) -> StoredDocument?

    /// Whether the storage wakes this process's feeds for its own commits too (through ``observeCommits(pollInterval:_:)``),
    /// at the sequence up to which feeds may read: PostgreSQL, whose writers commit out of sequence order. Writers
    /// then do not announce their sequences themselves (``announce(_:to:)``).
    var announcesOwnCommits: Bool { get }

    /// Whether writes should come with their rows worked out ahead (``EncodedWrite/Rows``), for ``store(_:)`` to
    /// write under the lock (SQLite) or in one statement (PostgreSQL); a storage that works them out itself, under
    /// its lock, says no, so that no write encodes them twice.
    var encodesWritesAhead: Bool { get }

    /// Stores a write prepared beforehand (``EncodedWrite``), with its attachments, if the document is still the
    /// one it was computed on (its sequence is ``EncodedWrite/previousSequence``).
    ///
    /// - Returns: The sequence the write was stored at, or nil when the document changed meanwhile (nothing is
    ///   stored; the caller computes the write again).
    func store(_ write: EncodedWrite) throws(GatewayError) -> UInt64?

    /// Stores writes prepared beforehand (``store(_:)-(EncodedWrite)``), together: for each, the sequence it was stored at,
    /// nil when its document changed meanwhile (or appears earlier in `writes`), or why it failed. A storage reached
    /// over the network stores them in one round trip.
    ///
    /// - Throws: When nothing could be stored.
    func store(_ writes: [EncodedWrite]) throws(GatewayError) -> [Result<UInt64?, GatewayError>]

    /// Runs `body` in a transaction, whose updates commit together at its end (each update still succeeds or fails
    /// on its own).
    ///
    /// `body` gets the storage as the transaction sees it, a value to make its calls through (as GRDB hands its
    /// `Database` to a transaction's closure): PostgreSQL never finds the transaction from the calling thread, and
    /// calls made on the storage itself meanwhile run beside the batch, not in it. (SQLite passes itself: its one
    /// writer is the calling thread's for the whole batch, so the same thread's calls join the batch either way and
    /// another thread's wait for it. Code inside a batch makes its calls through `body`'s storage, which is right for
    /// both.)
    ///
    /// ```swift
    /// try storage.inBatch { batch throws(GatewayError) in
    ///     user.sequence = try batch.nextSequence()
    ///     try batch.putUser(user)
    /// }
    /// ```
    func inBatch<T>(_ body: (any GatewayStorage) throws(GatewayError) -> T) throws(GatewayError) -> T

    /// ``inBatch(_:)`` for a body that updates the documents `ids`, which a storage may read at once beforehand.
    func inBatch<T>(
        updating ids: [String], _ body: (any GatewayStorage) throws(GatewayError) -> T
    ) throws(GatewayError) -> T

    /// Removes a document entirely (purge); returns whether it existed.
    ///
    /// - Parameter expiredBy: When given, the document is removed only if its expiry is at or before this date,
    ///   checked in the purge's own transaction (so a document given a later expiry meanwhile stays).
    @discardableResult
    func purge(documentID: String, expiredBy: Date?) throws(GatewayError) -> Bool

    /// Every document's latest change after `since`, in sequence order.
    func changes(since: UInt64, limit: Int?) throws(GatewayError) -> [ChangeEntry]

    /// The latest changes after `since` of documents that are, or were until that change, in one of
    /// `channels`; entries of documents that left all of them carry ``ChangeEntry/removedFrom``.
    func changes(inChannels channels: Set<String>, since: UInt64, limit: Int?) throws(GatewayError) -> [ChangeEntry]

    /// IDs of documents whose expiry (``StoredDocument/expiry``) is at or before `date`, soonest first, at most
    /// `limit`: what the expiry sweep purges.
    func expiredDocumentIDs(at date: Date, limit: Int) throws(GatewayError) -> [String]

    /// Document IDs in order, tombstones included (paging through every document).
    func documentIDs(from startKey: String?, to endKey: String?, limit: Int?) throws(GatewayError) -> [String]

    /// The IDs of live documents (not tombstones) in `range`, in its order, at most `limit`: an `_all_docs` page
    /// reads what it returns, not the whole database.
    func liveDocumentIDs(in range: DocumentIDRange, limit: Int?) throws(GatewayError) -> [String]

    /// The IDs of live documents in any of `channels` (a user's), in `range`, in its order, at most `limit`: a
    /// user's `_all_docs` page reads the rows of their channels from its start key on, not the whole channels.
    func liveDocumentIDs(
        inChannels channels: Set<String>, in range: DocumentIDRange, limit: Int?
    ) throws(GatewayError) -> [String]

    /// A `_local` document's body and revision (`0-N`).
    func localDocument(id: String) throws(GatewayError) -> (revision: String, body: JSONValue)?

    /// Stores a `_local` document if `expectedRevision` matches the stored one (nil: must not exist).
    ///
    /// - Returns: The new revision `0-N`.
    /// - Throws: `.conflict` (409) when the revision does not match.
    func putLocalDocument(id: String, body: JSONValue, expectedRevision: String?) throws(GatewayError) -> String

    /// Deletes a `_local` document if the revision matches.
    func deleteLocalDocument(id: String, expectedRevision: String?) throws(GatewayError)

    /// An attachment's bytes by digest (`sha1-…`).
    func attachment(digest: String) throws(GatewayError) -> [UInt8]?

    /// Stores attachment bytes under their SHA-1 digest and returns it.
    @discardableResult
    func putAttachment(_ data: [UInt8]) throws(GatewayError) -> String

    // MARK: - Principal sequences and maintenance

    /// Allocates the next database sequence for a change that is not a document revision (a user or role
    /// update, spec: sync-function.md §8.1). The sequence is durable: it is never given out again, by this
    /// call or by a document write, even after a restart.
    func nextSequence() throws(GatewayError) -> UInt64

    /// Drops the stored bodies of non-leaf revisions and empties tombstone bodies, without changing any
    /// document's sequence (`POST /{db}/_compact`, gateway-rest-api.md §16).
    ///
    /// - Returns: How many revision bodies were removed.
    func compact() throws(GatewayError) -> Int

    /// A UUID naming this storage, made when it was created and kept with its data (`server_uuid` of `_status`).
    var storageUUID: String { get throws(GatewayError) }

    /// Channel grants that documents' `access()` calls make to `principal` (a user name or `role:NAME`), each
    /// channel with the sequence of the change that first granted it.
    func documentChannelGrants(to principal: String) throws(GatewayError) -> [String: UInt64]

    /// Role grants that documents' `role()` calls make to user `name` (bare role names), each with the sequence of
    /// the change that first granted it.
    func documentRoleGrants(to name: String) throws(GatewayError) -> [String: UInt64]

    /// Every grant documents make to `principal` (a user name or `role:NAME`), with the document making it, in
    /// sequence order.
    func documentGrantSources(to principal: String) throws(GatewayError) -> [DocumentGrantSource]

    /// Every channel a document is in now, with how many documents are, in channel order (`GET /{db}/_channels`).
    func channelCounts() throws(GatewayError) -> [ChannelCount]

    /// Document counts and storage sizes (`GET /{db}/`).
    var statistics: StorageStatistics { get throws(GatewayError) }

    /// Every channel `user` can read with the sequence at which they gained it (see the extension's default, which
    /// computes it; storages may remember it until the user's grants change).
    func channelGrantSequences(of user: User) throws(GatewayError) -> [String: UInt64]

    /// Records that `user`'s revocation-aware feed serves `channels` now (at `sequence`): channels served before and
    /// missing now are marked revoked at `sequence`, served through the previous feed's end; a channel served again
    /// is no longer revoked. Returns every revoked channel with the sequence of its revocation and the last sequence
    /// through which it was served (the newest changes the user could have read in it).
    func noteServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64) throws(GatewayError)
        -> [String: RevokedChannel]

    /// Calls `handler` with what other processes commit (their writes are never announced in this one), so that
    /// this process's feeds wake for them and it applies the settings they share; at least every `pollInterval`.
    /// Storages only one process writes never call it.
    func observeCommits(pollInterval: Duration, _ handler: @escaping @Sendable (StorageCommit) -> Void)

    /// The settings shared by every node serving this storage, or nil when none were shared (or only one process
    /// serves it).
    func sharedSettings() throws(GatewayError) -> SharedDatabaseSettings?

    /// Shares `settings` with every node serving this storage, as a new version, which it returns (0 when only one
    /// process serves the storage: nothing is kept).
    @discardableResult
    func shareSettings(_ settings: SharedDatabaseSettings) throws(GatewayError) -> UInt64

    /// A value the gateway keeps about this database under `key` (the sync function's deploy history), shared by
    /// every node serving the storage; nil when none was stored.
    func storedValue(_ key: String) throws(GatewayError) -> String?

    /// Stores a value under `key` (see ``storedValue(_:)``), replacing the one there.
    func storeValue(_ value: String, forKey key: String) throws(GatewayError)

    /// Closes the storage; later calls throw 503.
    func close()

    // MARK: Awaiting

    /// ``documents(ids:winnerAsText:)`` for `async` callers: a storage across a network (PostgreSQL) holds no
    /// thread while it answers; one in the process reads in place.
    func fetchDocuments(ids: [String], winnerAsText: Bool) async throws(GatewayError) -> [String: StoredDocument]

    /// ``store(_:)-([EncodedWrite])`` for `async` callers: a storage across a network (PostgreSQL) holds no thread
    /// while it answers; one in the process stores in place.
    func submit(_ writes: [EncodedWrite]) async throws(GatewayError) -> [Result<UInt64?, GatewayError>]

    /// ``changes(since:limit:)`` for `async` callers (feeds): a storage across a network holds no thread while it
    /// answers; one in the process reads in place.
    func fetchChanges(since: UInt64, limit: Int?) async throws(GatewayError) -> [ChangeEntry]

    /// ``changes(inChannels:since:limit:)`` for `async` callers (feeds): a storage across a network holds no thread
    /// while it answers; one in the process reads in place.
    func fetchChanges(inChannels channels: Set<String>, since: UInt64, limit: Int?) async throws(GatewayError)
        -> [ChangeEntry]

    /// ``lastSequence`` for `async` callers: a storage across a network holds no thread while it answers.
    func fetchLastSequence() async throws(GatewayError) -> UInt64

    /// ``leafRevisions(ids:)`` for `async` callers: a storage across a network holds no thread while it answers.
    func fetchLeafRevisions(ids: [String]) async throws(GatewayError) -> [String: [RevisionID]]

    /// ``liveDocumentIDs(in:limit:)`` (`channels` nil) or ``liveDocumentIDs(inChannels:in:limit:)`` for `async`
    /// callers: a storage across a network holds no thread while it answers.
    func fetchLiveDocumentIDs(inChannels channels: Set<String>?, in range: DocumentIDRange, limit: Int?)
        async throws(GatewayError) -> [String]

    /// ``statistics`` for `async` callers: a storage across a network holds no thread while it answers.
    func fetchStatistics() async throws(GatewayError) -> StorageStatistics

    /// ``attachment(digest:)`` for `async` callers: a storage across a network holds no thread while it answers.
    func fetchAttachment(digest: String) async throws(GatewayError) -> [UInt8]?

    /// ``localDocument(id:)`` for `async` callers: a storage across a network holds no thread while it answers.
    func fetchLocalDocument(id: String) async throws(GatewayError) -> (revision: String, body: JSONValue)?

    /// ``putLocalDocument(id:body:expectedRevision:)`` for `async` callers: a storage across a network holds no
    /// thread while it answers.
    func submitLocalDocument(id: String, body: JSONValue, expectedRevision: String?) async throws(GatewayError)
        -> String

    /// ``deleteLocalDocument(id:expectedRevision:)`` for `async` callers: a storage across a network holds no thread
    /// while it answers.
    func submitLocalDocumentDeletion(id: String, expectedRevision: String?) async throws(GatewayError)

    /// ``noteServedChannels(_:of:at:)`` for `async` callers: a storage across a network holds no thread while it
    /// answers.
    func submitServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64)
        async throws(GatewayError) -> [String: RevokedChannel]

    /// ``channelGrantSequences(of:)`` for `async` callers: a storage across a network holds no thread while it
    /// answers.
    func fetchChannelGrantSequences(of user: User) async throws(GatewayError) -> [String: UInt64]
}

extension GatewayStorage {
    /// The stored documents among `ids`, read at one point in time, their bodies parsed
    /// (``documents(ids:winnerAsText:)``).
    public func documents(ids: [String]) throws(GatewayError) -> [String: StoredDocument] {
        try documents(ids: ids, winnerAsText: false)
    }

    /// ``documents(ids:winnerAsText:)``, in place: the storage answers without waiting on a network.
    public func fetchDocuments(ids: [String], winnerAsText: Bool) async throws(GatewayError) -> [String: StoredDocument] {
        try documents(ids: ids, winnerAsText: winnerAsText)
    }

    /// ``store(_:)-([EncodedWrite])``, in place: the storage answers without waiting on a network.
    public func submit(_ writes: [EncodedWrite]) async throws(GatewayError) -> [Result<UInt64?, GatewayError>] {
        try store(writes)
    }

    /// ``changes(since:limit:)``, in place: the storage answers without waiting on a network.
    public func fetchChanges(since: UInt64, limit: Int?) async throws(GatewayError) -> [ChangeEntry] {
        try changes(since: since, limit: limit)
    }

    /// ``changes(inChannels:since:limit:)``, in place: the storage answers without waiting on a network.
    public func fetchChanges(inChannels channels: Set<String>, since: UInt64, limit: Int?) async throws(GatewayError)
        -> [ChangeEntry]
    {
        try changes(inChannels: channels, since: since, limit: limit)
    }

    /// ``lastSequence``, in place: the storage answers without waiting on a network.
    public func fetchLastSequence() async throws(GatewayError) -> UInt64 {
        try lastSequence
    }

    /// ``leafRevisions(ids:)``, in place: the storage answers without waiting on a network.
    public func fetchLeafRevisions(ids: [String]) async throws(GatewayError) -> [String: [RevisionID]] {
        try leafRevisions(ids: ids)
    }

    /// ``liveDocumentIDs(in:limit:)`` or ``liveDocumentIDs(inChannels:in:limit:)``, in place: the storage answers
    /// without waiting on a network.
    public func fetchLiveDocumentIDs(inChannels channels: Set<String>?, in range: DocumentIDRange, limit: Int?)
        async throws(GatewayError) -> [String]
    {
        if let channels { return try liveDocumentIDs(inChannels: channels, in: range, limit: limit) }
        return try liveDocumentIDs(in: range, limit: limit)
    }

    /// ``statistics``, in place: the storage answers without waiting on a network.
    public func fetchStatistics() async throws(GatewayError) -> StorageStatistics {
        try statistics
    }

    /// ``attachment(digest:)``, in place: the storage answers without waiting on a network.
    public func fetchAttachment(digest: String) async throws(GatewayError) -> [UInt8]? {
        try attachment(digest: digest)
    }

    /// ``localDocument(id:)``, in place: the storage answers without waiting on a network.
    public func fetchLocalDocument(id: String) async throws(GatewayError) -> (revision: String, body: JSONValue)? {
        try localDocument(id: id)
    }

    /// ``putLocalDocument(id:body:expectedRevision:)``, in place: the storage answers without waiting on a network.
    public func submitLocalDocument(id: String, body: JSONValue, expectedRevision: String?) async throws(GatewayError)
        -> String
    {
        try putLocalDocument(id: id, body: body, expectedRevision: expectedRevision)
    }

    /// ``deleteLocalDocument(id:expectedRevision:)``, in place: the storage answers without waiting on a network.
    public func submitLocalDocumentDeletion(id: String, expectedRevision: String?) async throws(GatewayError) {
        try deleteLocalDocument(id: id, expectedRevision: expectedRevision)
    }

    /// ``channelGrantSequences(of:)``, in place: the storage answers without waiting on a network.
    public func fetchChannelGrantSequences(of user: User) async throws(GatewayError) -> [String: UInt64] {
        try channelGrantSequences(of: user)
    }

    /// ``noteServedChannels(_:of:at:)``, in place: the storage answers without waiting on a network.
    public func submitServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64)
        async throws(GatewayError) -> [String: RevokedChannel]
    {
        try noteServedChannels(channels, of: user, at: sequence)
    }

    /// Writers announce their commits (``announce(_:to:)``).
    public var announcesOwnCommits: Bool { false }

    /// Wakes `notifier`'s feeds for a commit at `sequence`, unless the storage announces its commits itself
    /// (``announcesOwnCommits``): the one way writers announce.
    public func announce(_ sequence: UInt64, to notifier: ChangeNotifier) {
        guard !announcesOwnCommits else { return }
        notifier.notify(sequence)
    }

    /// The sequence through which a feed may read now: the notifier's; for a storage that announces its own commits,
    /// whose announcement comes a moment after the commit, the one it reads now (and tells the notifier of), so that
    /// a feed requested after a write of this node reads it.
    public func readableSequence(announcedBy notifier: ChangeNotifier) async throws(GatewayError) -> UInt64 {
        guard announcesOwnCommits else { return notifier.lastSequence }
        let sequence = try await fetchLastSequence()
        notifier.notify(sequence)
        return max(sequence, notifier.lastSequence)
    }

    /// No rows worked out ahead: ``store(_:)`` goes through ``update(documentID:_:)``.
    public var encodesWritesAhead: Bool { false }

    /// ``GatewayStorage/leafRevisions(ids:)`` from the whole documents (a storage that can read only their
    /// metadata does better).
    public func leafRevisions(ids: [String]) throws(GatewayError) -> [String: [RevisionID]] {
        try documents(ids: ids).mapValues { $0.tree.leaves.map(\.id) }
    }

    /// ``GatewayStorage/store(_:)`` through ``GatewayStorage/update(documentID:_:)``: the storage works the write
    /// out under its own lock.
    public func store(_ write: EncodedWrite) throws(GatewayError) -> UInt64? {
        try storeThroughUpdate(write)
    }

    /// Stores `write` with ``GatewayStorage/update(documentID:_:)`` if its document is still the one it was computed
    /// on (its sequence is ``EncodedWrite/previousSequence``); nil when it is not.
    public func storeThroughUpdate(_ write: EncodedWrite) throws(GatewayError) -> UInt64? {
        var stale = false
        let stored = try update(documentID: write.document.id) { current, transaction throws(GatewayError) in
            guard current?.sequence == write.previousSequence else {
                stale = true
                return nil
            }
            for data in write.attachments { try transaction.putAttachment(data) }
            return write.document
        }
        return stale ? nil : stored?.sequence
    }

    /// ``GatewayStorage/store(_:)-([EncodedWrite])`` as one batch of ``GatewayStorage/store(_:)-(EncodedWrite)``
    /// calls, each succeeding or failing on its own.
    public func store(_ writes: [EncodedWrite]) throws(GatewayError) -> [Result<UInt64?, GatewayError>] {
        try inBatch(updating: writes.map(\.document.id)) { batch throws(GatewayError) in
            writes.map { write in Result { () throws(GatewayError) in try batch.store(write) } }
        }
    }

    /// Calls `body` with every document ID in order, `size` at a time, until it returns false (`_all_docs`, resync,
    /// impact): each page read after the last ID of the one before.
    public func forEachDocumentIDPage(
        size: Int = 500, _ body: ([String]) throws(GatewayError) -> Bool
    ) throws(GatewayError) {
        var after: String?
        while true {
            var ids = try documentIDs(from: after, to: nil, limit: size + 1)
            let isLast = ids.count <= size
            if let after, ids.first == after { ids.removeFirst() }
            let page = Array(ids.prefix(size))
            guard let last = page.last, try body(page), !isLast else { return }
            after = last
        }
    }

    /// Removes a document entirely (purge); returns whether it existed.
    @discardableResult
    public func purge(documentID: String) throws(GatewayError) -> Bool {
        try purge(documentID: documentID, expiredBy: nil)
    }

    /// ``inBatch(_:)``: each update reads its document.
    public func inBatch<T>(
        updating ids: [String], _ body: (any GatewayStorage) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        try inBatch(body)
    }

    /// ``update(documentID:_:)-(_,(StoredDocument?,any GatewayStorage)->StoredDocument?)`` for a transform that
    /// makes no storage call of its own.
    @discardableResult
    public func update(
        documentID: String, _ transform: (StoredDocument?) throws(GatewayError) -> StoredDocument?
    ) throws(GatewayError) -> StoredDocument? {
        try update(documentID: documentID) { current, _ throws(GatewayError) in try transform(current) }
    }

    /// Nothing: only this process writes.
    public func observeCommits(pollInterval: Duration, _ handler: @escaping @Sendable (StorageCommit) -> Void) {}

    /// None: only this process serves the storage, with the settings it holds in memory.
    public func sharedSettings() throws(GatewayError) -> SharedDatabaseSettings? { nil }

    /// Nothing to share: only this process serves the storage.
    @discardableResult
    public func shareSettings(_ settings: SharedDatabaseSettings) throws(GatewayError) -> UInt64 { 0 }
}

/// A channel a user's feeds served and the user then lost.
public struct RevokedChannel: Sendable, Hashable {
    /// When the loss was noticed.
    public var revokedAt: UInt64
    /// The last sequence through which the channel was served.
    public var servedThrough: UInt64

    public init(revokedAt: UInt64, servedThrough: UInt64) {
        self.revokedAt = revokedAt
        self.servedThrough = servedThrough
    }
}
