import CouchetteCore
import Foundation
import Hummingbird

// MARK: - SyncHandlers

/// `POST /{db}/_resync` and `POST /{db}/_sync_preview` (admin).
struct SyncHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - _resync

    /// `POST /{db}/_resync`: with the database offline, re-runs the sync function over every document →
    /// `{"changes": N}`; online → 503 "Database must be _offline before calling /_resync".
    ///
    /// With `?action=start` (Sync Gateway 3's form) the resync runs in the background instead, online or not, and the
    /// answer is its progress (`GET /{db}/_resync`); `?action=stop` stops it after its current batch.
    @Sendable func resync(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.requireAdmin()
        let database = target.database
        switch QueryOptions(request).string("action") {
        case nil: break
        case "start"?:
            try database.startResync()
            environment.log(LogKeys.crud, "_resync of db \"\(database.name)\" started in the background")
            return environment.renderer.response(json: database.resyncJob.progress.json)
        case "stop"?:
            database.stopResync()
            return environment.renderer.response(json: database.resyncJob.progress.json)
        case let other?:
            throw GatewayError.badRequest("Unknown action \"\(other)\": start or stop")
        }
        switch database.state {
        case .offline: break
        case .resyncing: throw GatewayError.serviceUnavailable("Database _resync is already in progress")
        default: throw GatewayError.serviceUnavailable("Database must be _offline before calling /_resync")
        }
        database.setState(.resyncing)
        defer { database.setState(.offline) }
        let changed = try database.resync()
        environment.log(LogKeys.crud, "_resync of db \"\(database.name)\": \(changed) documents changed")
        return environment.renderer.response(json: ["changes": .int(Int64(changed))])
    }

    /// `GET /{db}/_resync`: the background resync's progress, `{"status", "docs_processed", "docs_changed",
    /// "docs_total"}` (status `idle`, `running`, `stopping`, `completed`, `stopped` or `failed`).
    @Sendable func resyncStatus(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.requireAdmin()
        return environment.renderer.response(json: target.database.resyncJob.progress.json)
    }

    // MARK: - _access

    /// `GET /{db}/_access?user=NAME[&doc=ID]`: why the user can read what they can, and whether they can read and
    /// write the document (``AuthorizedDatabase/explainAccess(userName:documentID:)``); `GET /{db}/_access?channel=NAME`:
    /// the users and roles that can read the channel. The Admin UI's access explainer.
    @Sendable func access(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        let query = QueryOptions(request)
        if let user = query.string("user") {
            return environment.renderer.response(json: try target.explainAccess(userName: user, documentID: query.string("doc")))
        }
        if let channel = query.string("channel") {
            return environment.renderer.response(json: try target.channelReaders(channel))
        }
        throw GatewayError.badRequest("Give user (and doc) or channel")
    }

    /// `GET /{db}/_channels`: every channel a document is in now, with its document count (the Admin UI's channels).
    @Sendable func channels(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        return environment.renderer.response(json: try target.channels())
    }

    // MARK: - _sync_preview

    /// `POST /{db}/_sync_preview`: runs a sync function over documents and persists nothing (the Admin UI's
    /// Live Preview). Body:
    ///
    /// ```json
    /// {"sync": "function(doc, oldDoc){…}",      // optional: the function to try (default: the one in use)
    ///  "docs": [{"_id": "a", "type": "task-list"}],  // documents to route (oldDoc: the stored one with that _id)
    ///  "pairs": [{"doc": {"_id": "a"}, "oldDoc": {"_id": "a", "type": "x"}}],  // documents with the oldDoc given
    ///  "doc_ids": ["b"],                          // stored documents, routed as they are
    ///  "random": true,                            // one random stored document
    ///  "sample": 20,                              // that many random stored documents
    ///  "user": "user1"}                           // run as this user (default: the admin, require* pass)
    /// ```
    ///
    /// → `{"results":[{"id","channels":[…],"access":{…},"roles":{…},"expiry"?} | {"id","error","reason","status",
    /// "detail"?}]}`, each with the `console` lines it wrote as `"logs": [{"level","message"}]` when there are any and,
    /// for a failure, what went wrong (`detail`: an exception's text and line; it may quote the document, and only
    /// the admin sees it). A function that does not compile → 400 naming the line.
    @Sendable func preview(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.requireAdmin()
        let body = try await environment.body.jsonObject(of: request)
        let source: String?
        switch body["sync"] {
        case .string(let text)?: source = text
        case nil, .null?: source = target.database.config.sync
        default: throw GatewayError.badRequest("sync must be a string")
        }
        let lines = PreviewConsole()
        let router = try SyncFunctionLoader.router(for: source, console: lines.console)
        let user = try previewUser(body["user"], in: target)
        var inputs: [(id: String, request: RoutingRequest?)] = []
        if let docs = body["docs"] {
            guard case .array(let items) = docs else { throw GatewayError.badRequest("docs must be an array") }
            for item in items {
                guard case .object(var members) = item else { throw GatewayError.badRequest("docs must hold JSON objects") }
                let id = members["_id"]?.stringValue ?? DocumentStore.generateID()
                members["_id"] = .string(id)
                inputs.append((id, RoutingRequest(document: .object(members), oldDocument: try target.currentSyncInput(id: id))))
            }
        }
        if let pairs = body["pairs"] {
            guard case .array(let items) = pairs else { throw GatewayError.badRequest("pairs must be an array") }
            for item in items {
                guard case .object(var members)? = item["doc"] else {
                    throw GatewayError.badRequest("each pair needs a doc object")
                }
                let id = members["_id"]?.stringValue ?? DocumentStore.generateID()
                members["_id"] = .string(id)
                var oldDocument: JSONValue?
                switch item["oldDoc"] {
                case nil, .null?: oldDocument = nil
                case .object(var old)?:
                    old["_id"] = .string(id)
                    oldDocument = .object(old)
                default: throw GatewayError.badRequest("a pair's oldDoc must be an object or null")
                }
                inputs.append((id, RoutingRequest(document: .object(members), oldDocument: oldDocument)))
            }
        }
        var ids: [String] = []
        if let docIDs = body["doc_ids"] {
            guard case .array(let items) = docIDs, items.allSatisfy({ $0.stringValue != nil }) else {
                throw GatewayError.badRequest("doc_ids must be an array of strings")
            }
            ids += items.compactMap(\.stringValue)
        }
        if body["random"]?.boolValue == true { ids += try target.randomDocumentIDs(count: 1) }
        if let sample = body["sample"] {
            guard let count = sample.intValue, count >= 0, count <= 1_000 else {
                throw GatewayError.badRequest("sample must be an integer from 0 to 1000")
            }
            ids += try target.randomDocumentIDs(count: Int(count))
        }
        for id in ids { inputs.append((id, try target.storedSyncInput(id: id))) }
        let results = inputs.map { input in
            Self.result(id: input.id, request: input.request, router: router, user: user, lines: lines)
        }
        return environment.renderer.response(json: ["results": .array(results)])
    }

    // MARK: - _sync_impact

    /// `POST /{db}/_sync_impact` with `{"sync": "function…", "sample": N}` (default 100 random documents; 0 to
    /// 10,000) or `{"sync": …, "all": true}`: runs the deployed and the given function over stored documents, as a
    /// resync would, and reports what would change (``SyncImpact``): documents whose channels, grants or roles change
    /// or which become refused or accepted, and the principals that gain or lose channels and roles. Nothing is
    /// stored. A function that does not compile → 400 naming the line.
    @Sendable func impact(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.requireAdmin()
        let body = try await environment.body.jsonObject(of: request)
        guard case .string(let source)? = body["sync"] else { throw GatewayError.badRequest("sync must be a string") }
        var sample: Int? = 100
        if body["all"]?.boolValue == true {
            sample = nil
        } else if let value = body["sample"] {
            guard let count = value.intValue, (0...10_000).contains(count) else {
                throw GatewayError.badRequest("sample must be an integer from 0 to 10000")
            }
            sample = Int(count)
        }
        let edited = try SyncFunctionLoader.router(for: source)
        let deployed = try SyncFunctionLoader.router(for: target.database.config.sync)
        let impact = try target.syncImpact(of: edited, against: deployed, sample: sample)
        return environment.renderer.response(json: impact.json)
    }

    /// The user context of `"user"`, or nil (admin) when absent.
    private func previewUser(_ value: JSONValue?, in target: AuthorizedDatabase) throws(GatewayError) -> SyncUserContext? {
        guard let value, !value.isNull else { return nil }
        guard let name = value.stringValue else { throw GatewayError.badRequest("user must be a string") }
        return try target.syncContext(ofUser: name)
    }

    /// `{"id","channels","access","roles","expiry"?,"logs"?}` or the rejection `{"id","error","reason","status",
    /// "detail"?,"logs"?}`; 404 `missing` for a stored document that does not exist.
    static func result(
        id: String, request: RoutingRequest?, router: any ChannelRouter, user: SyncUserContext?, lines: PreviewConsole
    ) -> JSONValue {
        guard let request else { return BulkDocsWriter.failure(id: id, error: GatewayError.notFound("missing")) }
        lines.clear()
        var members: [String: JSONValue]
        let outcome: SyncFunctionOutcome
        if let function = router as? JavaScriptSyncFunction {
            outcome = function.evaluate(document: request.document, oldDocument: request.oldDocument, user: user)
        } else {
            do {
                outcome = .routed(try router.route(document: request.document, oldDocument: request.oldDocument, user: user))
            } catch {
                outcome = .rejected(error)
            }
        }
        switch outcome {
        case .routed(let routing):
            members = routing.json.objectValue ?? [:]
            members["id"] = .string(id)
        case .rejected(let error):
            members = BulkDocsWriter.failure(id: id, error: error).objectValue ?? [:]
        case .failed(let error, let detail):
            members = BulkDocsWriter.failure(id: id, error: error).objectValue ?? [:]
            members["detail"] = .string(detail)
        }
        let logs = lines.take()
        if !logs.isEmpty {
            members["logs"] = .array(logs.map { ["level": .string($0.level), "message": .string($0.message)] })
        }
        return .object(members)
    }
}
