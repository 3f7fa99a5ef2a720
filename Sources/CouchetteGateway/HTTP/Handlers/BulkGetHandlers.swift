import CouchetteCore
import Hummingbird

// MARK: - BulkGetHandlers

/// `POST /{db}/_bulk_get?revs=&revs_limit=&attachments=&show_exp=` (spec: gateway-rest-api.md §9,
/// replication-protocol.md §7.1): many revisions in one request.
///
/// The answer is `multipart/mixed` (one part per entry, as Sync Gateway sends Couchbase Lite) unless `Accept`
/// names JSON and not multipart, or allows JSON only: then CouchDB's JSON form
/// `{"results":[{"id","docs":[{"ok":…}|{"error":…}]}]}`, which PouchDB reads.
struct BulkGetHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    /// `POST /{db}/_bulk_get`.
    ///
    /// - Throws: 400 when the body lacks `docs`, 406 when `Accept` allows neither JSON nor multipart.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let accept = AcceptHeader(request.headers[.accept])
        try accept.requireJSONOrMultipart()
        let base = try DocumentHandlers.readOptions(QueryOptions(request))
        let object = try await environment.body.jsonObject(of: request)
        guard case .array(let docs)? = object["docs"] else {
            throw GatewayError.badRequest("missing 'docs' property")
        }
        let items = docs.map(BulkGetItem.init(json:))
        // One read for every document (one transaction instead of one per entry).
        let snapshots = try await target.snapshots(ids: items.compactMap { $0.isValid ? $0.id : nil })
        let results = items.map { Self.result(for: $0, in: target, base: base, snapshots: snapshots) }
        if accept.namesMultipart || (accept.allowsMultipart && !accept.namesJSON) {
            return MultipartBody(subtype: "mixed", parts: results.map(\.mixedPart)).response()
        }
        if environment.renderer.pretty {
            return environment.renderer.response(json: ["results": .array(results.map(\.json))])
        }
        // {"results":[…]}, the stored bodies written as they are.
        var writer = JSONWriter(reservingCapacity: 256 * results.count)
        writer.beginObject()
        writer.key("results")
        writer.beginArray()
        for result in results { result.write(to: &writer) }
        writer.endArray()
        writer.endObject()
        return environment.renderer.response(jsonText: writer.bytes)
    }

    /// Reads one entry as the caller.
    static func result(
        for item: BulkGetItem, in target: AuthorizedDatabase, base: ReadOptions, snapshots: [String: StoredDocument]? = nil
    ) -> BulkGetResult {
        guard item.isValid, let id = item.id else {
            return .failure(
                id: item.id, revision: item.revisionText, error: .badRequest("Invalid doc/rev ID in _bulk_get"))
        }
        let options = item.options(base)
        if let snapshots,
            let text = target.revisionText(id: id, revision: item.revision, options: options, in: snapshots),
            let current = snapshots[id]?.winner?.id.description
        {
            return .text(id: id, revision: current, body: text)
        }
        do {
            let revision = try target.revision(
                id: id, revision: item.revision, options: options, in: snapshots)
            return .success(revision)
        } catch {
            return .failure(id: id, revision: item.revisionText, error: error)
        }
    }
}
