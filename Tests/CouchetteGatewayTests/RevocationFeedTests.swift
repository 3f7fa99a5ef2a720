import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - RevocationFeedTests

/// `_changes?revocations=true` (Sync Gateway 3): after a user loses a channel (an admin change, a role taken away),
/// the feed names the documents the user can no longer read with `"revoked": true`, so clients can purge them;
/// documents still readable through another channel, documents made after the revocation and feeds without the
/// parameter are left out.
@Suite("_changes revocations", .timeLimit(.minutes(2)))
struct RevocationFeedTests {
    static func changes(_ client: HTTPTestClient, _ ports: BoundPorts, since: String, revocations: Bool = true)
        async throws -> (results: [JSONValue], lastSeq: String?)
    {
        let reply = try await client.send(
            port: ports.publicPort, path: "/todo/_changes?since=\(since)" + (revocations ? "&revocations=true" : ""),
            user: ("alice", "pass"))
        try #require(reply.status == 200, "\(reply.status) \(reply.text)")
        return try ChangesTests.results(reply.text)
    }

    @Test("Losing a channel by an admin change, then a role: the documents only it gave are revoked once")
    func revokedDocuments() async throws {
        let config = GatewayFixture.config(databases: [
            DatabaseConfig(name: "todo", roles: ["team": RoleConfig(name: "team", adminChannels: ["t"])])
        ])
        try await AdminGatewayFixture.run(config) { client, ports, _ in
            let user = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/alice",
                json: ["password": "pass", "admin_channels": ["a", "b"], "admin_roles": ["team"]])
            #expect(user.status == 201)
            let onlyA = try await ChangesTests.put(client, port: ports.adminPort, "onlyA", ["channels": ["a"]])
            _ = try await ChangesTests.put(client, port: ports.adminPort, "aAndB", ["channels": ["a", "b"]])
            _ = try await ChangesTests.put(client, port: ports.adminPort, "team", ["channels": ["t"]])
            let synced = try await Self.changes(client, ports, since: "0")
            let syncedIDs = Set(synced.results.compactMap { $0["id"]?.stringValue })
            #expect(syncedIDs.isSuperset(of: ["onlyA", "aAndB", "team"]))
            #expect(synced.results.allSatisfy { $0["revoked"] == nil })
            let since = try #require(synced.lastSeq)

            // The admin takes channel "a" away; a document made in "a" afterwards was never alice's.
            let revoke = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/alice", json: ["admin_channels": ["b"], "admin_roles": ["team"]])
            #expect(revoke.status == 200)
            _ = try await ChangesTests.put(client, port: ports.adminPort, "laterA", ["channels": ["a"]])

            // Without the parameter, SG 1.x's behaviour: nothing.
            let plain = try await Self.changes(client, ports, since: since, revocations: false)
            #expect(plain.results.allSatisfy { $0["revoked"] == nil })

            let first = try await Self.changes(client, ports, since: since)
            let revoked = first.results.filter { $0["revoked"] == true }
            #expect(revoked.map { $0["id"] } == ["onlyA"], "\(first.results)")
            #expect(revoked.first?["changes"] == [["rev": .string(onlyA)]])
            let after = try #require(first.lastSeq)
            #expect(try ChangeSequence.parse(after).normalPosition >= (try ChangeSequence.parse(since).normalPosition))

            // Resuming after it: not again. Losing the role: its documents.
            #expect(try await Self.changes(client, ports, since: after).results.allSatisfy { $0["revoked"] == nil })
            let noRole = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/alice", json: ["admin_channels": ["b"], "admin_roles": []])
            #expect(noRole.status == 200)
            let second = try await Self.changes(client, ports, since: after)
            #expect(second.results.filter { $0["revoked"] == true }.map { $0["id"] } == ["team"], "\(second.results)")
        }
    }
}
