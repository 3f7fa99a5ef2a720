import CouchetteCore
import Foundation
import Hummingbird

// MARK: - PrincipalHandlers

/// The admin port's users and roles (spec: gateway-rest-api.md §14): `/{db}/_user/…` and `/{db}/_role/…`, the two
/// kinds handled alike over ``DatabasePrincipals``.
///
/// ```text
/// PUT /todo/_user/user1 {"name":"user1","password":"pass"}   → 201, empty body
/// PUT /todo/_user/user1 {"admin_roles":["moderator"]}         → 200, empty body (password kept)
/// GET /todo/_user/user1 → {"name":"user1","admin_channels":[],"all_channels":["!","moderators"],…}
/// ```
struct PrincipalHandlers: Sendable {
    // MARK: - Kind

    /// Which principals the handlers serve.
    enum Kind: Sendable {
        /// `/{db}/_user/`.
        case user
        /// `/{db}/_role/`.
        case role
    }

    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    /// Users or roles.
    let kind: Kind

    // MARK: - Collection

    /// `GET /{db}/_user/`, `GET /{db}/_role/`: the names, sorted.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let principals = try await principals(request, context: context)
        let names = try kind == .user ? principals.userNames() : principals.roleNames()
        return environment.renderer.response(json: .sortedStrings(names))
    }

    /// `POST /{db}/_user/`, `POST /{db}/_role/`: creates a principal named by the body → 201, empty body.
    ///
    /// - Throws: 400 `Missing name property`; 409 `Already exists`.
    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let principals = try await principals(request, context: context)
        let body = try await environment.body.json(of: request)
        try save(body, name: nil, mustBeNew: true, in: principals)
        return Response(status: .created)
    }

    // MARK: - One principal

    /// `GET /{db}/_user/{name}`, `GET /{db}/_role/{name}`: the principal's JSON; 404 when unknown.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let principals = try await principals(request, context: context)
        let name = try Self.name(from: context)
        let json = try kind == .user ? principals.userJSON(named: name) : principals.roleJSON(named: name)
        return environment.renderer.response(json: json)
    }

    /// `PUT /{db}/_user/{name}`, `PUT /{db}/_role/{name}`: creates (201) or replaces (200), empty body.
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let principals = try await principals(request, context: context)
        let name = try Self.name(from: context)
        let body = try await environment.body.json(of: request)
        let created = try save(body, name: name, mustBeNew: false, in: principals)
        return Response(status: created ? .created : .ok)
    }

    /// `DELETE /{db}/_user/{name}`, `DELETE /{db}/_role/{name}`: 200, empty body; 404 when unknown.
    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let principals = try await principals(request, context: context)
        let name = try Self.name(from: context)
        switch kind {
        case .user: try principals.deleteUser(named: name)
        case .role: try principals.deleteRole(named: name)
        }
        return Response(status: .ok)
    }

    // MARK: - Helpers

    /// The principals of the addressed database (online only).
    private func principals(_ request: Request, context: GatewayRequestContext) async throws(GatewayError)
        -> DatabasePrincipals
    {
        try await environment.resolver.resolve(request, context: context).database.principals
    }

    /// Parses and saves a body; returns whether the principal was created.
    @discardableResult
    private func save(_ body: JSONValue, name: String?, mustBeNew: Bool, in principals: DatabasePrincipals)
        throws(GatewayError) -> Bool
    {
        switch kind {
        case .user: try principals.saveUser(UserUpdate(parsing: body, name: name), mustBeNew: mustBeNew)
        case .role: try principals.saveRole(RoleUpdate(parsing: body, name: name), mustBeNew: mustBeNew)
        }
    }

    /// The percent-decoded `{name}` segment.
    static func name(from context: GatewayRequestContext) throws(GatewayError) -> String {
        try context.pathSegment("name")
    }
}
