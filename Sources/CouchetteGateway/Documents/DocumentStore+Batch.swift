import CouchetteCore

// MARK: - Batches

extension DocumentStore {
    /// One edit of a batch, with the snapshot of its document it is computed on.
    struct BatchEdit: Sendable {
        /// The document ID.
        let id: String
        /// The document as read before the batch; nil when it was absent.
        let snapshot: StoredDocument?
        /// The edit, before routing.
        let edit: UnroutedEdit
    }

    /// Computes the writes of a batch one user makes (`_bulk_docs`) on their snapshots, as ``prepare(id:snapshots:_:)``
    /// does for one, with one ``ChannelRouter/route(batch:user:)`` call for every revision the batch adds: the sync
    /// function crosses into JavaScript once per batch rather than once per document. Each write's results and
    /// errors are the ones a write alone would have; one redone at commit routes on its own.
    ///
    /// - Parameters:
    ///   - edits: The edits, or why one cannot be made (kept as its result).
    ///   - user: The user writing, for the sync function's `require*` checks; nil on the admin port.
    /// - Returns: One prepared write, or its error, per edit, in order.
    func prepare(batch edits: [Result<BatchEdit, GatewayError>], user: SyncUserContext?)
        -> [Result<PreparedWrite, GatewayError>]
    {
        let applied = edits.map { edit in
            edit.flatMap { edit in Result { () throws(GatewayError) in try edit.edit(edit.snapshot, storage) } }
        }
        var routedPositions: [Int] = []
        var requests: [RoutingRequest] = []
        for (position, result) in applied.enumerated() {
            guard case .success(.added(let added)) = result else { continue }
            routedPositions.append(position)
            requests.append(routingRequest(of: added.revision, in: added.document))
        }
        var routings: [Int: Result<RoutingResult, GatewayError>] = [:]
        let encoding = storage.encodesWritesAhead
        for (position, routing) in zip(routedPositions, router.route(batch: requests, user: user)) {
            routings[position] = routing
        }
        return applied.indices.map { position in
            Result { () throws(GatewayError) in
                let edit = try edits[position].get()
                let result: DocumentEditResult
                switch try applied[position].get() {
                case .unchanged(let revision):
                    result = DocumentEditResult(document: nil, revision: revision)
                case .added(let added):
                    guard let routing = routings[position] else { throw .internalError("The revision was not routed") }
                    result = try finish(added, routing: routing.get())
                }
                return PreparedWrite(
                    id: edit.id, snapshot: edit.snapshot, result: result, edit: routed(edit.edit, user: user),
                    encodingRows: encoding)
            }
        }
    }
}
