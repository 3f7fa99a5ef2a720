import CouchetteCore

// MARK: - Maintenance

extension GatewayDatabase {
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

    /// `GET /{db}/_raw/{doc}` (spec: gateway-rest-api.md §16): the current body with the `_sync` metadata
    /// (``RawDocumentJSON``).
    ///
    /// - Throws: 404 `missing` for an unknown (or purged) document.
    public func rawDocument(id: String) throws(GatewayError) -> JSONValue {
        guard let document = try storage.document(id: id) else { throw .notFound("missing") }
        return RawDocumentJSON.make(document)
    }
}
