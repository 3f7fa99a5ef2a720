import CouchetteCore

// MARK: - All documents

extension AuthorizedDatabase {
    /// `_all_docs` as the caller may see it (spec: gateway-rest-api.md §7): the rows of the live documents in
    /// their channels (or of the given `keys`, a 404/403 error row for one missing or out of reach), in ID order,
    /// paged by `skip` and `limit`. For a caller who sees every channel, `total_rows` counts every live document, as
    /// CouchDB does; for a user who sees some, it is the rows emitted, as the spec and Sync Gateway give it.
    ///
    /// A page costs what it returns: a caller who sees every channel reads the page's IDs in order from the
    /// storage and `total_rows` from its counts; a user reads their channels' rows from the start key on, in ID
    /// order, up to the page's end (``GatewayStorage/liveDocumentIDs(inChannels:in:limit:)``; a user with more than
    /// 256 channels in SQLite, or of an in-memory database, reads their channels' feeds whole). Requested `keys` are
    /// read at once. A storage across a network holds no thread while it answers.
    ///
    /// - Throws: 400 when `keys` comes with `key`, `startkey` or `endkey`.
    func allDocs(keys: [String]?, options: AllDocsOptions) async throws(GatewayError) -> JSONValue {
        var keys = keys
        if let key = options.key {
            guard keys == nil else { throw GatewayError.badRequest("`keys` is incompatible with `key`") }
            keys = [key]
        }
        if keys != nil, options.startKey != nil || options.endKey != nil {
            throw GatewayError.badRequest("`keys` is incompatible with `startkey` and `endkey`")
        }
        let updateSequence = options.updateSequence ? try await database.storage.fetchLastSequence() : 0
        let range = DocumentIDRange(
            startKey: options.startKey, endKey: options.endKey, inclusiveEnd: options.inclusiveEnd,
            descending: options.descending)
        var rows: [JSONValue]
        if var keys {
            if options.descending { keys.reverse() }
            let page = Self.page(keys, options)
            let documents = try await database.storage.fetchDocuments(ids: page, winnerAsText: false)
            rows = try page.map { key throws(GatewayError) in try row(forKey: key, in: documents, options) }
        } else {
            // `skip` and `limit` are any non-negative Int: their sum may not fit.
            let wanted = options.limit.map { limit in
                let (sum, overflow) = options.skip.addingReportingOverflow(limit)
                return overflow ? Int.max : sum
            }
            let ids = try await database.storage.fetchLiveDocumentIDs(
                inChannels: caller.readableChannels, in: range, limit: wanted)
            let pageIDs = Array(ids.dropFirst(min(options.skip, ids.count)))
            let documents = try await database.storage.fetchDocuments(ids: pageIDs, winnerAsText: false)
            rows = []
            for id in pageIDs {
                // A document deleted, or moved out of the caller's channels, since its ID was read is left out, as it
                // would have been a moment later.
                guard let document = documents[id], let winner = document.winner, !winner.isDeleted,
                    caller.canSee(document.currentChannels)
                else { continue }
                rows.append(try row(for: document, options))
            }
        }
        let totalRows =
            caller.readableChannels == nil ? try await database.storage.fetchStatistics().documentCount : rows.count
        var body: [String: JSONValue] = ["rows": .array(rows), "total_rows": .int(Int64(totalRows))]
        if options.updateSequence { body["update_seq"] = .int(Int64(updateSequence)) }
        return .object(body)
    }

    /// `skip` then `limit`.
    static func page<T>(_ items: [T], _ options: AllDocsOptions) -> [T] {
        let skipped = items.dropFirst(min(options.skip, items.count))
        return Array(options.limit.map { skipped.prefix($0) } ?? skipped)
    }

    /// The row of one requested key: the document (among those read), or a 404/403 error row.
    private func row(forKey key: String, in documents: [String: StoredDocument], _ options: AllDocsOptions)
        throws(GatewayError) -> JSONValue
    {
        guard let document = documents[key], let winner = document.winner else {
            return ["key": .string(key), "error": "not_found", "status": 404]
        }
        guard caller.canSee(document.currentVisibilityChannels) else {
            return ["key": .string(key), "error": "forbidden", "status": 403]
        }
        if winner.isDeleted {
            return [
                "key": .string(key), "id": .string(key),
                "value": ["rev": .string(winner.id.description), "deleted": true],
            ]
        }
        return try row(for: document, options)
    }

    private func row(for document: StoredDocument, _ options: AllDocsOptions)
        throws(GatewayError) -> JSONValue
    {
        guard let winner = document.winner else { throw .notFound("missing") }
        var value: [String: JSONValue] = ["rev": .string(winner.id.description)]
        if options.channels { value["channels"] = .array(document.currentChannels.sorted().map(JSONValue.string)) }
        if options.access {
            var access: [String: JSONValue] = [:]
            for (name, channels) in document.access { access[name] = .array(channels.sorted().map(JSONValue.string)) }
            value["access"] = .object(access)
        }
        var row: [String: JSONValue] = ["key": .string(document.id), "id": .string(document.id), "value": .object(value)]
        if options.includeDocs {
            var read = ReadOptions(includeRevisions: options.revisions, includeAttachments: options.attachments)
            read.includeConflicts = options.conflicts
            row["doc"] = try database.documents.loadedRevision(of: winner, in: document, options: read).json
        }
        if options.updateSequence { row["update_seq"] = .int(Int64(document.sequence)) }
        return .object(row)
    }
}
