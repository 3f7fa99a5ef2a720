import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AdminGatewayFixture

/// Runs a gateway like ``GatewayFixture`` but with cheap bcrypt (cost 4) and hands the test the registry too, so
/// that admin-API tests can create users quickly and look at databases directly (state, sequences).
enum AdminGatewayFixture {
    /// A configuration on loopback port 0 with one in-memory database `todo` whose GUEST is disabled, a role
    /// `moderator` (channel `moderators`) and no user.
    static func config(guest: Bool = false) -> GatewayConfig {
        var database = DatabaseConfig(
            name: "todo", roles: ["moderator": RoleConfig(name: "moderator", adminChannels: ["moderators"])])
        if guest { database.users["GUEST"] = UserConfig(name: "GUEST", adminChannels: ["*"]) }
        return GatewayFixture.config(databases: [database])
    }

    /// Starts a server over a registry with a cost-4 hasher, runs `body`, then shuts the server down.
    static func run(
        _ config: GatewayConfig = AdminGatewayFixture.config(),
        _ body: (HTTPTestClient, BoundPorts, DatabaseRegistry) async throws -> Void
    ) async throws {
        var config = config
        config.databases = await GatewayFixture.onTestStorage(config.databases)
        let registry = try DatabaseRegistry(config: config, hasher: PasswordHasher(cost: 4))
        let server = try GatewayServer(config: config, registry: registry, logger: GatewayFixture.logger)
        try await GatewayFixture.withRunning(server) { client, ports in try await body(client, ports, registry) }
    }

    /// The `SyncGatewaySession` value of a response's `Set-Cookie` header(s), or `nil`.
    static func sessionCookie(in reply: HTTPTestClient.Reply) -> String? {
        guard let header = reply.header("Set-Cookie"),
            let start = header.range(of: "\(Session.cookieName)=")?.upperBound
        else { return nil }
        return String(header[start...].prefix { $0 != ";" })
    }

    /// A `Cookie` header carrying a session ID.
    static func cookieHeader(_ id: String) -> [String: String] {
        ["Cookie": "\(Session.cookieName)=\(id)"]
    }
}
