import CouchetteCore
import Foundation
import Hummingbird

// MARK: - DatabaseResolver

/// Finds the database a request names and authenticates its caller (spec: gateway-rest-api.md §1.3):
/// the admin listener is the admin; on the public listener Basic credentials, then the session cookie, then
/// `GUEST`.
struct DatabaseResolver: Sendable {
    /// Whether an endpoint needs a user.
    enum Login: Sendable {
        /// 401 "Login required" unless a user (or an enabled `GUEST`) is found.
        case required
        /// Anonymous callers are accepted (`/_session`).
        case optional
    }

    /// The served databases.
    let registry: DatabaseRegistry
    /// The listener requests arrive on.
    let listener: GatewayListener
    /// Logs `Auth` lines (names only, never credentials).
    let log: GatewayLog

    /// Resolves the `{db}` segment and the caller.
    ///
    /// - Parameters:
    ///   - login: Whether a user is needed.
    ///   - requireOnline: Whether a database that is not online answers 503.
    /// - Throws: 404 for an unknown database, 401 for bad or missing credentials, 503 when offline.
    func resolve(
        _ request: Request, context: GatewayRequestContext, login: Login = .required, requireOnline: Bool = true
    ) async throws(GatewayError) -> AuthorizedDatabase {
        let database = try await registry.requireDatabase(named: try Self.databaseName(from: context))
        let caller = try await authenticate(request, context: context, database: database, login: login)
        if requireOnline { try database.requireOnline() }
        return AuthorizedDatabase(database: database, caller: caller)
    }

    /// The caller of a request to `database`.
    func authenticate(
        _ request: Request, context: GatewayRequestContext, database: GatewayDatabase, login: Login
    ) async throws(GatewayError) -> Caller {
        if listener == .admin { return .admin }
        let authenticator = database.authenticator
        if let authorization = request.headers[.authorization] {
            let user: User?
            do {
                user = try await authenticator.authenticate(authorization: authorization, from: context.clientAddress)
            } catch {
                let name = BasicCredentials(authorization: authorization)?.username ?? "?"
                log(LogKeys.auth, "Invalid login for user \"\(name)\" on db \"\(database.name)\"")
                throw error
            }
            if let user {
                log(LogKeys.auth, "User \"\(user.name)\" authenticated by password on db \"\(database.name)\"")
                return try await caller(for: user, in: database)
            }
        }
        if let sessionID = Self.cookie(named: Session.cookieName, in: request),
            let session = try await authenticator.sessions.fetchSession(id: sessionID),
            let user = try await authenticator.store.fetchUser(named: session.username), !user.disabled
        {
            if let refreshed = try authenticator.sessions.refreshIfNeeded(session) {
                context.extraResponseHeaders.append(
                    .setCookie, Self.sessionCookie(refreshed, databaseName: database.name))
            }
            log(LogKeys.auth, "User \"\(user.name)\" authenticated by session cookie on db \"\(database.name)\"")
            return try await caller(for: user, in: database)
        }
        if let guest = try await authenticator.guest() {
            return try await caller(for: guest, in: database)
        }
        if login == .required { throw .unauthorized("Login required") }
        return .anonymous
    }

    /// A user's caller value, with the channels they can read.
    func caller(for user: User, in database: GatewayDatabase) async throws(GatewayError) -> Caller {
        .user(user, channels: try await database.principals.fetchAllChannels(of: user))
    }

    // MARK: - Path and headers

    /// The percent-decoded `{db}` path segment.
    ///
    /// - Throws: ``GatewayError/unknownURL`` for segments starting with `_` (reserved for special endpoints).
    static func databaseName(from context: GatewayRequestContext) throws(GatewayError) -> String {
        try context.pathSegment("db", allowingUnderscore: false)
    }

    /// The percent-decoded `{db}` of a `/{db}/{endpoint}` path, or nil for other paths: for the WebSocket upgrades,
    /// decided before routing (`_changes?feed=websocket`, `_blipsync`).
    static func databaseName(inPath path: String, endpoint: String) -> String? {
        let segments = path.split(separator: "/")
        guard segments.count == 2, segments[1] == endpoint, !segments[0].hasPrefix("_") else { return nil }
        let raw = String(segments[0])
        return raw.removingPercentEncoding ?? raw
    }

    /// A cookie's value from the `Cookie` headers.
    static func cookie(named name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                return String(trimmed[trimmed.index(after: equals)...])
            }
        }
        return nil
    }

    /// The `Set-Cookie` value for a session: `SyncGatewaySession=<id>; Path=/<db>; Expires=…; HttpOnly`.
    static func sessionCookie(_ session: Session, databaseName: String) -> String {
        "\(Session.cookieName)=\(session.id); Path=/\(databaseName); Expires=\(httpDate(session.expires)); HttpOnly"
    }

    /// The `Set-Cookie` value that clears the session cookie.
    static func clearedSessionCookie(databaseName: String) -> String {
        "\(Session.cookieName)=; Path=/\(databaseName); Expires=\(httpDate(Date(timeIntervalSince1970: 0))); HttpOnly"
    }

    /// An RFC 7231 date: `Sun, 22 Nov 2026 10:00:00 GMT`.
    static func httpDate(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!, calendar: Calendar(identifier: .gregorian)))
    }
}
