import Foundation
import CouchetteCore

// MARK: - Maintenance

extension GatewayDatabase {
    /// Re-runs the sync function over every document (`POST /{db}/_resync`, with the database offline); see
    /// ``DocumentStore/resync()``.
    ///
    /// - Returns: How many documents changed.
    public func resync() throws(GatewayError) -> Int {
        try documents.resync()
    }

    /// Starts a resync in the background, the database staying online (``ResyncJob``); its progress is
    /// ``ResyncJob/progress``.
    ///
    /// - Throws: 503 when one is already running.
    public func startResync() throws(GatewayError) {
        let statistics = try storage.statistics
        try resyncJob.start(documents, total: statistics.documentCount + statistics.deletedDocumentCount)
    }

    /// Stops a background resync after its current batch of documents.
    public func stopResync() {
        resyncJob.stop()
    }

    /// `POST /{db}/_compact` (spec: gateway-rest-api.md §16): drops the stored bodies of non-leaf revisions and
    /// empties tombstone bodies. Sequences do not change, so nothing shows in `_changes`.
    ///
    /// ```swift
    /// try database.compact()   // 3
    /// ```
    ///
    /// - Returns: How many revision bodies were removed (`{"revs": N}`).
    @discardableResult
    public func compact() throws(GatewayError) -> Int {
        let removed = try storage.compact()
        GatewayMetrics.shared.revisionsCompacted(removed)
        return removed
    }

    /// `POST /{db}/_purge` (spec: gateway-rest-api.md §16): removes documents entirely (history and metadata
    /// too); purges are not replicated and make no `_changes` entry.
    ///
    /// ```swift
    /// try database.purge(["doc1": ["*"], "doc2": ["1-a"], "nope": ["*"]])
    /// // {"purged":{"doc1":["*"]}}: only exact ["*"] values of existing documents are purged
    /// ```
    ///
    /// - Parameter request: The body: document IDs mapped to `["*"]`.
    /// - Returns: `{"purged": {…}}` listing the documents purged.
    /// - Throws: 400 when the body is not a JSON object.
    public func purge(_ request: JSONValue) throws(GatewayError) -> JSONValue {
        guard let entries = request.objectValue else { throw .badRequest("_purge body must be a JSON object") }
        var purged: [String: JSONValue] = [:]
        for (id, revisions) in entries.sorted(by: { $0.key < $1.key }) where revisions == ["*"] {
            if try storage.purge(documentID: id) { purged[id] = ["*"] }
        }
        GatewayMetrics.shared.documentsPurged(purged.count)
        return .object(["purged": .object(purged)])
    }

    /// Purges the documents whose expiry (`_exp`, or the sync function's `expiry()`) is at or before `now`, as
    /// Couchbase Server's expiry does under Sync Gateway: gone entirely, with no `_changes` entry. Each node runs
    /// it every ``expirySweepInterval`` while the database is online; nodes sweeping one shared storage at once
    /// purge each document once, and a document given a later expiry meanwhile stays.
    ///
    /// - Returns: How many documents were purged.
    @discardableResult
    public func purgeExpiredDocuments(now: Date = Date()) throws(GatewayError) -> Int {
        var purged = 0
        while true {
            let ids = try storage.expiredDocumentIDs(at: now, limit: 500)
            for id in ids where try storage.purge(documentID: id, expiredBy: now) { purged += 1 }
            if ids.count < 500 { break }
        }
        GatewayMetrics.shared.documentsPurged(purged)
        return purged
    }

    /// Runs ``purgeExpiredDocuments(now:)`` every ``expirySweepInterval`` while the database is online, until it
    /// closes.
    func startExpirySweep() {
        let task = Task.detached(executorPreference: executor, priority: .background) { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: GatewayDatabase.expirySweepInterval)
                guard let self, !Task.isCancelled else { return }
                if self.state == .online { _ = try? self.purgeExpiredDocuments() }
            }
        }
        expirySweep.withLock { $0 = task }
    }

    /// `GET /{db}/_raw/{doc}` (spec: gateway-rest-api.md §16): the current body with the `_sync` metadata
    /// (``RawDocumentJSON``).
    ///
    /// - Throws: 404 `missing` for an unknown (or purged) document.
    public func rawDocument(id: String) throws(GatewayError) -> JSONValue {
        guard let document = try storage.document(id: id) else { throw .notFound("missing") }
        return RawDocumentJSON.make(document)
    }
}
