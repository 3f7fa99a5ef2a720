import CouchetteCore
import Hummingbird

// MARK: - AllDocsHandler

/// `GET`/`POST /{db}/_all_docs` (spec: gateway-rest-api.md §7).
struct AllDocsHandler: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    /// `GET /{db}/_all_docs` with `key`, `keys`, `startkey`, `endkey`, `descending`, `inclusive_end`, `skip`,
    /// `limit`, `include_docs` (with `conflicts` and `attachments`), `channels`, `access`, `revs`, `update_seq`, as
    /// CouchDB reads them: `total_rows` counts every live document the caller may see, whatever the page.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let query = QueryOptions(request)
        return try respond(target, query: query, keys: try query.stringArray("keys"))
    }

    /// `POST /{db}/_all_docs` with a body `{"keys":[…]}`; options from the query.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await environment.body.jsonObject(of: request)
        guard case .array(let items)? = body["keys"], items.allSatisfy({ $0.stringValue != nil }) else {
            throw GatewayError.badRequest("Bad/missing keys")
        }
        return try respond(target, query: QueryOptions(request), keys: items.compactMap(\.stringValue))
    }

    private func respond(_ target: DatabaseRequest, query: QueryOptions, keys: [String]?) throws -> Response {
        let options = try AllDocsOptions(query, caller: target.caller)
        var keys = keys
        if let key = options.key {
            guard keys == nil else { throw GatewayError.badRequest("`keys` is incompatible with `key`") }
            keys = [key]
        }
        if keys != nil, options.startKey != nil || options.endKey != nil {
            throw GatewayError.badRequest("`keys` is incompatible with `startkey` and `endkey`")
        }
        let updateSequence = try target.database.storage.lastSequence
        let visible = try visibleIDs(target)
        var rows: [JSONValue]
        if var keys {
            if options.descending { keys.reverse() }
            rows = try Self.page(keys, options).map { key throws(GatewayError) in try row(forKey: key, target, options) }
        } else {
            rows = try Self.page(Self.range(visible, options), options).compactMap { id throws(GatewayError) in
                guard let document = try target.database.storage.document(id: id) else { return nil }
                return try row(for: document, target, options)
            }
        }
        var body: [String: JSONValue] = ["rows": .array(rows), "total_rows": .int(Int64(visible.count))]
        if options.updateSequence { body["update_seq"] = .int(Int64(updateSequence)) }
        return environment.renderer.response(json: .object(body))
    }

    /// The IDs of every live document the caller may see, in order (CouchDB's `total_rows` counts them all).
    private func visibleIDs(_ target: DatabaseRequest) throws(GatewayError) -> [String] {
        let storage = target.database.storage
        var visible: [String] = []
        var after: String?
        let pageSize = 1_000
        while true {
            var ids = try storage.documentIDs(from: after, to: nil, limit: pageSize + 1)
            if let after, ids.first == after { ids.removeFirst() }
            guard !ids.isEmpty else { break }
            for id in ids {
                guard let document = try storage.document(id: id), let winner = document.winner, !winner.isDeleted,
                    target.caller.canSee(document.currentChannels),
                    target.caller.isAdmin || !id.hasPrefix("_design/")
                else { continue }
                visible.append(id)
            }
            after = ids.last
            if ids.count < pageSize { break }
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
    private func row(forKey key: String, _ target: DatabaseRequest, _ options: AllDocsOptions) throws(GatewayError)
        -> JSONValue
    {
        guard let document = try target.database.storage.document(id: key), let winner = document.winner else {
            return ["key": .string(key), "error": "not_found", "status": 404]
        }
        guard target.caller.canSee(document.currentVisibilityChannels) else {
            return ["key": .string(key), "error": "forbidden", "status": 403]
        }
        if winner.isDeleted {
            return [
                "key": .string(key), "id": .string(key),
                "value": ["rev": .string(winner.id.description), "deleted": true],
            ]
        }
        return try row(for: document, target, options)
    }

    private func row(for document: StoredDocument, _ target: DatabaseRequest, _ options: AllDocsOptions)
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
            row["doc"] = try target.documents.loadedRevision(of: winner, in: document, options: read).json
        }
        if options.updateSequence { row["update_seq"] = .int(Int64(document.sequence)) }
        return .object(row)
    }
}

// MARK: - AllDocsOptions

/// The query options of `_all_docs`.
struct AllDocsOptions: Sendable {
    var includeDocs: Bool
    var channels: Bool
    var access: Bool
    var revisions: Bool
    var conflicts: Bool
    var attachments: Bool
    var updateSequence: Bool
    var startKey: String?
    var endKey: String?
    var limit: Int?
    var skip: Int
    var key: String?
    var descending: Bool
    var inclusiveEnd: Bool

    /// Reads the options; `access` is honoured for the admin only.
    init(_ query: QueryOptions, caller: Caller) throws(GatewayError) {
        includeDocs = try query.bool("include_docs")
        channels = try query.bool("channels")
        access = try query.bool("access") && caller.isAdmin
        revisions = try query.bool("revs")
        conflicts = try query.bool("conflicts")
        attachments = try query.bool("attachments")
        updateSequence = try query.bool("update_seq")
        startKey = Self.key(query.string("startkey") ?? query.string("start_key"))
        endKey = Self.key(query.string("endkey") ?? query.string("end_key"))
        limit = try query.int("limit")
        skip = try query.int("skip") ?? 0
        key = Self.key(query.string("key"))
        descending = try query.bool("descending")
        inclusiveEnd = try query.bool("inclusive_end", default: true)
    }

    /// A key given as a JSON string (`"abc"`) or raw text (`abc`).
    static func key(_ text: String?) -> String? {
        guard let text else { return nil }
        if let value = try? JSONValue(parsing: text), let string = value.stringValue { return string }
        return text
    }
}
