import Foundation
import Hummingbird

// MARK: - DatabaseHandlers

/// Database-level endpoints (spec: gateway-rest-api.md §4).
struct DatabaseHandlers: Sendable {
    // MARK: - Properties

    /// The served databases.
    let registry: DatabaseRegistry

    /// The JSON renderer.
    let renderer: JSONRenderer

    // MARK: - GET /{db}/

    /// `GET /{db}/`, `GET /{db}` and their `HEAD`s: the database information.
    @Sendable func getDatabase(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = try Self.databaseName(from: context)
        let info = try await registry.info(forDatabase: name)
        return try renderer.response(info.jsonObject)
    }

    // MARK: - Parameters

    /// The percent-decoded `{db}` path segment.
    ///
    /// - Throws: ``GatewayError/unknownURL`` for segments starting with `_` (reserved for special endpoints).
    static func databaseName(from context: GatewayRequestContext) throws(GatewayError) -> String {
        guard let raw = context.parameters.get("db") else { throw .unknownURL }
        let name = raw.removingPercentEncoding ?? raw
        guard !name.hasPrefix("_") else { throw .unknownURL }
        return name
    }
}
