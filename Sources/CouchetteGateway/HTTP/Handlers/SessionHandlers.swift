import CouchetteCore
import Foundation
import Hummingbird

// MARK: - SessionHandlers

/// Login sessions (spec: gateway-rest-api.md §13): the public port's cookie login and logout, the admin port's
/// session creation by user name, and session lookup and deletion.
///
/// ```text
/// POST /todo/_session {"name":"user1","password":"pass"}
///   → 200 {"ok":true,"authentication_handlers":["default","cookie"],"userCtx":{"name":"user1","channels":{…}}}
///     Set-Cookie: SyncGatewaySession=<40 hex>; Path=/todo; Expires=…; HttpOnly
/// POST :4985/todo/_session {"name":"user1","ttl":3600}
///   → 200 {"session_id":"…","expires":"2026-01-01T10:00:00.000Z","cookie_name":"SyncGatewaySession"}
/// ```
struct SessionHandlers: Sendable {
    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET /{db}/_session

    /// `GET /{db}/_session`: who the caller is, without needing a login (`name` null for GUEST or nobody).
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, login: .optional)
        return environment.renderer.response(json: Self.sessionInfo(target.caller.user?.userContext))
    }

    // MARK: - POST /{db}/_session

    /// `POST /{db}/_session`: on the public port a cookie login, on the admin port a session for a named user.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        return environment.isAdmin
            ? try await createSession(request, database: database)
            : try await login(request, context: context, database: database)
    }

    /// Public login: `{"name","password"}` in the body, or else the user the request authenticates as
    /// (Basic or cookie) → a new session, its cookie, and the session information.
    ///
    /// - Throws: 400 `No CORS` for an `Origin` outside `login_origin`; 401 `Invalid login`.
    private func login(
        _ request: Request, context: GatewayRequestContext, database: GatewayDatabase
    ) async throws -> Response {
        try checkLoginOrigin(request, database: database)
        let authenticator = database.authenticator
        let bytes = try await environment.body.bytes(of: request)
        var user: User?
        if !bytes.isEmpty {
            try RequestBody.requireJSONContentType(request)
            guard case .object(let body) = try RequestBody.parse(bytes) else {
                throw GatewayError.badRequest("Request body must be a JSON object")
            }
            if let name = try PrincipalBody.string(body, "name") {
                let password = try PrincipalBody.string(body, "password") ?? ""
                user = try await authenticator.authenticate(basic: name, password: password, from: context.clientAddress)
            }
        }
        if user == nil, let authorization = request.headers[.authorization] {
            user = try await authenticator.authenticate(authorization: authorization, from: context.clientAddress)
        }
        if user == nil, let id = DatabaseResolver.cookie(named: Session.cookieName, in: request) {
            user = try await authenticator.authenticate(sessionID: id)
        }
        guard let user, !user.isGuest else { throw GatewayError.unauthorized("Invalid login") }
        let session = try database.principals.createSession(for: user.name)
        var headers = HTTPFields()
        headers[.setCookie] = DatabaseResolver.sessionCookie(session, databaseName: database.name)
        return environment.renderer.response(json: Self.sessionInfo(user.userContext), headers: headers)
    }

    /// Admin session creation: `{"name","ttl"?}` → `{"session_id","expires","cookie_name"}`.
    ///
    /// - Throws: 400 for a missing, invalid or `GUEST` name or a TTL below one second; 404 for an unknown user.
    private func createSession(_ request: Request, database: GatewayDatabase) async throws -> Response {
        let body = try await environment.body.jsonObject(of: request)
        let name = (try? PrincipalBody.string(body, "name")) ?? nil
        var ttl = Session.defaultTTL
        if let value = body["ttl"], !value.isNull {
            guard let seconds = value.intValue.map(Double.init) ?? value.doubleValue else {
                throw GatewayError.badRequest("Invalid or missing ttl")
            }
            ttl = seconds
        }
        let session = try database.principals.createSession(for: name ?? "", ttl: ttl)
        return environment.renderer.response(json: [
            "session_id": .string(session.id),
            "expires": .string(Self.rfc3339(session.expires)),
            "cookie_name": .string(Session.cookieName),
        ])
    }

    // MARK: - DELETE /{db}/_session

    /// Public logout: deletes the cookie's session and clears the cookie; 404 `no session` without a cookie.
    ///
    /// - Throws: 400 `No CORS` for an `Origin` outside `login_origin`.
    @Sendable func logout(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        try checkLoginOrigin(request, database: database)
        guard let id = DatabaseResolver.cookie(named: Session.cookieName, in: request) else {
            throw GatewayError.notFound("no session")
        }
        try? database.principals.deleteSession(id: id)
        var headers = HTTPFields()
        headers[.setCookie] = DatabaseResolver.clearedSessionCookie(databaseName: database.name)
        return Response(status: .ok, headers: headers)
    }

    // MARK: - Sessions by ID (admin)

    /// `GET /{db}/_session/{id}`: the session information of the session's user; 404 when unknown or expired.
    @Sendable func getByID(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        let session = try database.principals.session(id: try Self.sessionID(from: context))
        guard let user = try database.principals.user(named: session.username) else {
            throw GatewayError.notFound("missing")
        }
        return environment.renderer.response(json: Self.sessionInfo(user.userContext))
    }

    /// `DELETE /{db}/_session/{id}` and `DELETE /{db}/_user/{name}/_session/{id}` (which also needs the session
    /// to be that user's): 200, empty body; 404 otherwise.
    @Sendable func deleteByID(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        let username = try context.parameters.get("name").map { _ throws(GatewayError) in
            try PrincipalHandlers.name(from: context)
        }
        try database.principals.deleteSession(id: try Self.sessionID(from: context), ofUser: username)
        return Response(status: .ok)
    }

    /// `GET /{db}/_user/{name}/_session`: the user's unexpired sessions, `{"sessions": [{"id", "expires", "ttl"}]}`
    /// (admin; the Admin UI lists them to revoke one); 404 for an unknown user.
    @Sendable func listOfUser(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        let sessions = try database.principals.sessions(ofUser: try PrincipalHandlers.name(from: context))
        return environment.renderer.response(json: [
            "sessions": .array(sessions.map { session in
                [
                    "id": .string(session.id), "expires": .string(session.expires.formatted(Date.ISO8601FormatStyle())),
                    "ttl": .int(Int64(session.ttl)),
                ]
            })
        ])
    }

    /// `DELETE /{db}/_user/{name}/_session`: deletes every session of the user; 404 for an unknown user.
    @Sendable func deleteAllOfUser(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await onlineDatabase(context)
        try database.principals.deleteSessions(ofUser: try PrincipalHandlers.name(from: context))
        return Response(status: .ok)
    }

    // MARK: - Helpers

    /// The addressed database, which must be online; the caller is not authenticated (login and logout do it
    /// themselves, so that a stale cookie refresh never overrides their `Set-Cookie`).
    private func onlineDatabase(_ context: GatewayRequestContext) async throws(GatewayError) -> GatewayDatabase {
        let database = try await environment.registry.requireDatabase(
            named: try DatabaseResolver.databaseName(from: context))
        try database.requireOnline()
        return database
    }

    /// Refuses login and logout from an `Origin` not listed in `login_origin` (the database's `cors`, else the
    /// server's `CORS`), as Sync Gateway does to keep other sites from logging users in.
    ///
    /// - Throws: 400 `No CORS`.
    private func checkLoginOrigin(_ request: Request, database: GatewayDatabase) throws(GatewayError) {
        guard let origin = request.headers[.origin] else { return }
        let loginOrigins = (database.config.cors ?? environment.config.cors)?.loginOrigins ?? []
        guard CORSMiddleware.allows(origin, in: loginOrigins) else { throw .badRequest("No CORS") }
    }

    /// The `{id}` segment.
    static func sessionID(from context: GatewayRequestContext) throws(GatewayError) -> String {
        guard let id = context.parameters.get("id") else { throw .unknownURL }
        return id
    }

    /// The session information body.
    ///
    /// - Parameter userContext: ``User/userContext``, or `nil` for a caller that is no user.
    static func sessionInfo(_ userContext: JSONValue?) -> JSONValue {
        [
            "ok": true,
            "authentication_handlers": ["default", "cookie"],
            "userCtx": userContext ?? User.anonymousContext,
        ]
    }

    /// An RFC 3339 UTC timestamp with milliseconds: `2026-01-01T10:00:00.000Z`.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
