import CouchetteCore

// MARK: - Resync and preview

extension DocumentStore {
    /// Re-runs the sync function, without a user, on the current revision of every document and stores the
    /// channels and grants it now gives (`POST /{db}/_resync`, spec: gateway-rest-api.md §16). A document whose
    /// routing changed gets a new sequence, so feeds see it join or leave channels.
    ///
    /// - Returns: How many documents changed.
    /// - Throws: Storage errors. A document the function now rejects keeps its old routing.
    public func resync() throws(GatewayError) -> Int {
        try resync { _, _ in true }
    }

    /// ``resync()`` reporting its progress after each batch of documents, and stopping when `progress` returns
    /// false (the documents done so far keep their new routing).
    ///
    /// - Parameter progress: Gets the documents processed and changed so far; returns whether to go on.
    /// - Returns: How many documents changed.
    public func resync(progress: (_ processed: Int, _ changed: Int) -> Bool) throws(GatewayError) -> Int {
        var changed = 0
        var processed = 0
        try storage.forEachDocumentIDPage { ids throws(GatewayError) in
            for id in ids where try resync(documentID: id) { changed += 1 }
            processed += ids.count
            return progress(processed, changed)
        }
        return changed
    }

    private func resync(documentID id: String) throws(GatewayError) -> Bool {
        let stored = try update(documentID: id) { current throws(GatewayError) in
            guard var document = current, let winner = document.winner?.id,
                let result = try? self.routing(of: winner, in: document, user: nil)
            else { return nil }
            let unchanged =
                document.channels[winner] == result.channels && document.access == result.access
                && document.roleAccess == result.roles
            guard !unchanged else { return nil }
            document.channels[winner] = result.channels
            document.access = result.access
            document.roleAccess = result.roles
            if let expiry = result.expiry { document.expiry = expiry }
            return document
        }
        return stored != nil
    }

    /// What a sync function would decide for a stored document's current revision, persisting nothing.
    ///
    /// - Parameters:
    ///   - id: The document ID.
    ///   - router: The function to try (by default the one in use).
    ///   - user: The user to run as; nil for the admin.
    /// - Throws: 404 when the document does not exist; the function's rejection.
    public func preview(id: String, with router: (any ChannelRouter)? = nil, user: SyncUserContext? = nil)
        throws(GatewayError) -> RoutingResult
    {
        guard let document = try storage.document(id: id), let winner = document.winner?.id else {
            throw .notFound("missing")
        }
        let store = router.map {
            DocumentStore(storage: storage, router: $0, revsLimit: revsLimit, changeNotifier: changeNotifier)
        } ?? self
        return try store.routing(of: winner, in: document, user: user)
    }
}
