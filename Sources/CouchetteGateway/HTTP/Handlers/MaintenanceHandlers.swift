import CouchetteCore
import Foundation
import Hummingbird

// MARK: - MaintenanceHandlers

/// The admin port's maintenance endpoints (spec: gateway-rest-api.md §16): `_online`, `_offline`, `_compact`,
/// `_purge` and `_raw`, over ``GatewayDatabase``.
///
/// ```text
/// POST /todo/_offline            → 200; public requests then get 503
/// POST /todo/_online {"delay":5} → 200; online five seconds later
/// POST /todo/_compact            → {"revs":3}
/// POST /todo/_purge {"doc1":["*"]} → {"purged":{"doc1":["*"]}}
/// ```
struct MaintenanceHandlers: Sendable {
    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - State

    /// `POST /{db}/_offline`: 200, empty body, in any state but starting (503).
    @Sendable func offline(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.database.takeOffline()
        return Response(status: .ok)
    }

    /// `POST /{db}/_online`, optional body `{"delay": seconds}`: 200 at once, empty body; online at once or after
    /// the delay.
    ///
    /// - Throws: 400 for a delay that is not a non-negative number; 503 while resyncing.
    @Sendable func online(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        let bytes = try await environment.body.bytes(of: request)
        var delay = Duration.zero
        if !bytes.isEmpty {
            try RequestBody.requireJSONContentType(request)
            guard case .object(let body) = try RequestBody.parse(bytes) else {
                throw GatewayError.badRequest("Request body must be a JSON object")
            }
            if let value = body["delay"], !value.isNull {
                guard let seconds = value.intValue.map(Double.init) ?? value.doubleValue, seconds >= 0,
                    seconds <= 86_400 * 365
                else { throw GatewayError.badRequest("\"delay\" must be a non-negative number of seconds") }
                delay = .milliseconds(Int64((seconds * 1000).rounded()))
            }
        }
        try target.database.takeOnline(after: delay)
        return Response(status: .ok)
    }

    // MARK: - Storage

    /// `POST /{db}/_compact`: `{"revs": N}`, the number of revision bodies removed.
    @Sendable func compact(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        // Sync Gateway's compaction types; both compact what this storage keeps (old bodies and tombstone bodies).
        _ = try QueryOptions(request).oneOf("type", ["tombstone", "attachment"])
        let target = try await environment.resolver.resolve(request, context: context)
        let removed = try target.database.compact()
        return environment.renderer.response(json: ["revs": .int(Int64(removed))])
    }

    /// `POST /{db}/_purge` with `{"docid":["*"],…}`: `{"purged":{…}}`.
    ///
    /// - Throws: 400 for a body that is not a JSON object.
    @Sendable func purge(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await environment.body.json(of: request)
        return environment.renderer.response(json: try target.database.purge(body))
    }

    /// `POST /{db}/_flush`: empties an in-memory (`walrus:`) database, as Sync Gateway's test helper does (200, empty
    /// body); 404 for a database kept anywhere else.
    @Sendable func flush(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try await environment.registry.flush(named: target.database.config.name)
        return Response(status: .ok)
    }

    /// `GET /{db}/_raw/{doc}`: the stored body with its `_sync` metadata; 404 when unknown.
    @Sendable func raw(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try context.pathSegment("doc")
        return environment.renderer.response(json: try target.database.rawDocument(id: id))
    }
}
