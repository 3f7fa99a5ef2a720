import CouchetteCore

// MARK: - All documents

extension AuthorizedDatabase {
    /// `_all_docs` as the caller may see it (spec: gateway-rest-api.md §7): the rows of the live documents in
    /// their channels (or of the given `keys`, a 404/403 error row for one missing or out of reach), in ID order,
    /// paged by `skip` and `limit`; `total_rows` counts every live document the caller may see, as CouchDB does.
    ///
    /// - Throws: 400 when `keys` comes with `key`, `startkey` or `endkey`.
    func allDocs(keys: [String]?, options: AllDocsOptions) throws(GatewayError) -> JSONValue {
        var keys = keys
        if let key = options.key {
            guard keys == nil else { throw GatewayError.badRequest("`keys` is incompatible with `key`") }
            keys = [key]
        }
        if keys != nil, options.startKey != nil || options.endKey != nil {
            throw GatewayError.badRequest("`keys` is incompatible with `startkey` and `endkey`")
        }
        let updateSequence = try database.storage.lastSequence
        let visible = try visibleIDs()
        var rows: [JSONValue]
        if var keys {
            if options.descending { keys.reverse() }
            rows = try Self.page(keys, options).map { key throws(GatewayError) in try row(forKey: key, options) }
        } else {
            rows = []
            for id in Self.page(Self.range(visible, options), options) {
                guard let document = try database.storage.document(id: id) else { continue }
                rows.append(try row(for: document, options))
            }
        }
        var body: [String: JSONValue] = ["rows": .array(rows), "total_rows": .int(Int64(visible.count))]
        if options.updateSequence { body["update_seq"] = .int(Int64(updateSequence)) }
        return .object(body)
    }

    /// The IDs of every live document the caller may see, in order (CouchDB's `total_rows` counts them all).
    private func visibleIDs() throws(GatewayError) -> [String] {
        let storage = database.storage
        var visible: [String] = []
        try storage.forEachDocumentIDPage(size: 1_000) { ids throws(GatewayError) in
            for id in ids {
                guard let document = try storage.document(id: id), let winner = document.winner, !winner.isDeleted,
                    caller.canSee(document.currentChannels),
                    caller.isAdmin || !id.hasPrefix("_design/")
                else { continue }
                visible.append(id)
            }
            return true
        }
        return visible
    }

    /// The IDs between the bounds, in the requested order: with `descending=true` CouchDB reads from `startkey`
    /// down to `endkey`; `inclusive_end=false` leaves `endkey` out.
    static func range(_ ids: [String], _ options: AllDocsOptions) -> [String] {
        if options.descending {
            return ids.reversed().filter { id in
                (options.startKey.map { id <= $0 } ?? true)
                    && (options.endKey.map { options.inclusiveEnd ? id >= $0 : id > $0 } ?? true)
            }
        }
        return ids.filter { id in
            (options.startKey.map { id >= $0 } ?? true)
                && (options.endKey.map { options.inclusiveEnd ? id <= $0 : id < $0 } ?? true)
        }
    }

    /// `skip` then `limit`.
    static func page<T>(_ items: [T], _ options: AllDocsOptions) -> [T] {
        let skipped = items.dropFirst(min(options.skip, items.count))
        return Array(options.limit.map { skipped.prefix($0) } ?? skipped)
    }

    /// The row of one requested key: the document, or a 404/403 error row.
    private func row(forKey key: String, _ options: AllDocsOptions) throws(GatewayError)
        -> JSONValue
    {
        guard let document = try database.storage.document(id: key), let winner = document.winner else {
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
