import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - CORSTests

/// CORS headers on the public listener for configured origins only.
@Suite("CORS", .timeLimit(.minutes(5)))
struct CORSTests {
    static let config: GatewayConfig = {
        var config = GatewayFixture.config()
        config.cors = CORSConfig(origins: ["http://app.example"], headers: ["Content-Type"], maxAge: 600)
        return config
    }()

    @Test("Allowed origins get CORS headers, preflights get methods and max age, others get none")
    func corsHeaders() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let allowed = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: ["Origin": "http://app.example"])
            #expect(allowed.status == 200)
            #expect(allowed.header("Access-Control-Allow-Origin") == "http://app.example")
            #expect(allowed.header("Access-Control-Allow-Credentials") == "true")
            #expect(allowed.header("Access-Control-Allow-Headers") == "Content-Type")

            let preflight = try await client.send(
                "OPTIONS", port: ports.publicPort, path: "/todo/doc", headers: ["Origin": "http://app.example"])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PUT") == true)
            #expect(preflight.header("Access-Control-Max-Age") == "600")

            let error = try await client.send(
                port: ports.publicPort, path: "/todo/missing", headers: ["Origin": "http://app.example"])
            #expect(error.status == 404)
            #expect(error.header("Access-Control-Allow-Origin") == "http://app.example")

            let other = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: ["Origin": "http://evil.example"])
            #expect(other.header("Access-Control-Allow-Origin") == nil)

            let admin = try await client.send(
                port: ports.adminPort, path: "/todo/", headers: ["Origin": "http://app.example"])
            #expect(admin.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
