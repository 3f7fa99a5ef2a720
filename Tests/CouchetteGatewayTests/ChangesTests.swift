import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ChangesTests

/// `_changes` (gateway-rest-api.md §11): the suites live in `Changes*Tests.swift` as nested suites, so
/// `swift test --filter ChangesTests` runs them all.
@Suite("_changes", .timeLimit(.minutes(5)))
struct ChangesTests {
    // MARK: - Helpers shared by the suites

    /// An in-memory database (no HTTP) for reader and feed tests.
    static func database() throws -> GatewayDatabase {
        try GatewayDatabase(config: DatabaseConfig(name: "todo"), startTime: 0)
    }

    /// A user who reads `channels`.
    static func user(_ name: String = "alice", channels: Set<String>) -> Caller {
        .user(User(name: name, adminChannels: channels), channels: channels)
    }

    /// Parses a rendered entry or body.
    static func json(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    /// The `results` and `last_seq` of a normal or longpoll body.
    static func results(_ text: String) throws -> (results: [JSONValue], lastSeq: String?) {
        let body = try json(text)
        return (body["results"]?.arrayValue ?? [], body["last_seq"]?.stringValue)
    }

    /// `PUT /{db}/{id}` over HTTP; returns the new revision.
    @discardableResult
    static func put(
        _ client: HTTPTestClient, port: Int, _ id: String, _ body: JSONValue, rev: String? = nil, db: String = "todo"
    ) async throws -> String {
        let path = "/\(db)/\(id)" + (rev.map { "?rev=\($0)" } ?? "")
        let reply = try await client.send("PUT", port: port, path: path, json: body)
        try #require(reply.status == 201, "PUT \(id): \(reply.status) \(reply.text)")
        return try #require(try reply.jsonValue()["rev"]?.stringValue)
    }

    /// `DELETE /{db}/{id}?rev=` over HTTP; returns the tombstone's revision.
    @discardableResult
    static func delete(_ client: HTTPTestClient, port: Int, _ id: String, rev: String) async throws -> String {
        let reply = try await client.send("DELETE", port: port, path: "/todo/\(id)?rev=\(rev)")
        try #require(reply.status == 200, "DELETE \(id): \(reply.status) \(reply.text)")
        return try #require(try reply.jsonValue()["rev"]?.stringValue)
    }

    /// A configuration with a `GUEST` reading every channel and users `alice` (channel `a`) and `bob` (`b`).
    static func usersConfig() -> GatewayConfig {
        GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "todo",
                users: [
                    "GUEST": UserConfig(name: "GUEST", disabled: true),
                    "alice": UserConfig(name: "alice", password: "pass", adminChannels: ["a"]),
                    "bob": UserConfig(name: "bob", password: "pass", adminChannels: ["b"]),
                ])
        ])
    }
}
