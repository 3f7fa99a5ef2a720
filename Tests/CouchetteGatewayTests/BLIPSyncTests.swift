import CouchetteBLIP
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// `/{db}/_blipsync`: the upgrade, its refusals and the checkpoint messages (blip-sync-protocol.md §1, §3.1, §3.2).
@Suite(.timeLimit(.minutes(2))) struct BLIPSyncTests {
    @Test("The upgrade echoes the first subprotocol spoken here and RFC 6455's accept value")
    func upgrade() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, _, ports in
            let connection = try RawConnection(port: ports.publicPort)
            let credentials = Data("alice:pass".utf8).base64EncodedString()
            try connection.send(
                "GET /todo/_blipsync HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_4, BLIP_3+CBMobile_3,BLIP_3+CBMobile_2\r\n"
                    + "Authorization: Basic \(credentials)\r\n\r\n")
            let reply = await connection.read(within: .seconds(10)) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
            #expect(reply.status == 101)
            let head = reply.text.lowercased()
            #expect(head.contains("sec-websocket-protocol: blip_3+cbmobile_3\r\n"))
            #expect(head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo=\r\n"))
        }
    }

    @Test("An upgrade without credentials or with wrong ones gets 401 with a Basic challenge (404 for an unknown database); no subprotocol in common is refused")
    func refusals() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let upgrade = [
                "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3",
            ]
            let anonymous = try await client.send(port: ports.publicPort, path: "/todo/_blipsync", headers: upgrade)
            #expect(anonymous.status == 401)
            // Spelt as Sync Gateway's (Go's) header, byte for byte: LiteCore's own tests read it so.
            #expect(anonymous.headers["Www-Authenticate"] == #"Basic realm="Couchbase Sync Gateway""#)
            #expect(try JSONValue(parsing: Array(anonymous.body))["reason"] == "Login required")
            let unknown = try await client.send(port: ports.publicPort, path: "/nowhere/_blipsync", headers: upgrade)
            #expect(unknown.status == 404)
            // Wrong credentials: 401 before the upgrade too, as a REST request with them gets.
            let wrong = try await client.send(
                port: ports.publicPort, path: "/todo/_blipsync", headers: upgrade, user: ("alice", "nope"))
            #expect(wrong.status == 401)
            #expect(wrong.headers["Www-Authenticate"] == #"Basic realm="Couchbase Sync Gateway""#)
            var versionVectors = upgrade
            versionVectors["Sec-WebSocket-Protocol"] = "BLIP_3+CBMobile_4"
            // Hummingbird answers an upgrade it declines with a bare 400.
            let refused = try await client.send(
                port: ports.publicPort, path: "/todo/_blipsync", headers: versionVectors, user: ("alice", "pass"))
            #expect(refused.status == 400)
            let plain = try await client.send(port: ports.publicPort, path: "/todo/_blipsync", user: ("alice", "pass"))
            #expect(plain.status == 400)
            #expect(String(decoding: plain.body, as: UTF8.self).contains("BLIP_3+CBMobile_3"))
            // With credentials after the challenge, as Couchbase Lite retries, the upgrade happens.
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let reply = try await connection.send(properties: ["Profile": "getCheckpoint", "client": "cp"])
                #expect(reply.error?.code == 404)
            }
        }
    }

    @Test("When GUEST may replicate, an upgrade without credentials goes through; on the admin port too")
    func guestUpgrade() async throws {
        try await StreamingGateway.run(GatewayFixture.config()) { _, _, ports in
            for port in [ports.publicPort, ports.adminPort] {
                try await BLIPTestClient.run(port: port) { connection in
                    let saved = try await connection.send(
                        properties: ["Profile": "setCheckpoint", "client": "cp-\(port)"], body: Array("{}".utf8))
                    #expect(saved.properties["rev"] == "0-1")
                }
            }
        }
    }

    @Test("Checkpoints: 404 first, saved with an empty rev, read back, 409 on a stale rev, shared with _local")
    func checkpoints() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let none = try await connection.send(properties: ["Profile": "getCheckpoint", "client": "cp-abc"])
                #expect(none.error?.domain == "HTTP")
                #expect(none.error?.code == 404)

                let body = Array(#"{"time":1764068160,"remote":2}"#.utf8)
                let saved = try await connection.send(
                    properties: ["Profile": "setCheckpoint", "client": "cp-abc", "rev": ""], body: body)
                #expect(saved.type == .response)
                let revision = try #require(saved.properties["rev"])
                #expect(revision == "0-1")

                let read = try await connection.send(properties: ["Profile": "getCheckpoint", "client": "cp-abc"])
                #expect(read.properties["rev"] == "0-1")
                #expect(try JSONValue(parsing: read.body) == ["time": 1_764_068_160, "remote": 2])

                let stale = try await connection.send(
                    properties: ["Profile": "setCheckpoint", "client": "cp-abc", "rev": ""], body: body)
                #expect(stale.error?.code == 409)
                let wrong = try await connection.send(
                    properties: ["Profile": "setCheckpoint", "client": "cp-new", "rev": "0-3"], body: body)
                #expect(wrong.error?.code == 409)
                let next = try await connection.send(
                    properties: ["Profile": "setCheckpoint", "client": "cp-abc", "rev": "0-1"],
                    body: Array(#"{"remote":5,"local":3}"#.utf8))
                #expect(next.properties["rev"] == "0-2")

                let unknown = try await connection.send(properties: ["Profile": "noSuchMessage"])
                #expect(unknown.error?.domain == "BLIP")
                #expect(unknown.error?.code == 404)
                // A collection-aware client (Couchbase Lite 3.1+ with collections other than the default) hears what
                // a Sync Gateway without collections says, and stops with it.
                let collections = try await connection.send(
                    properties: ["Profile": "getCollections"],
                    body: Array(#"{"collections":["inventory.hotels"],"checkpoint_ids":["cp-1"]}"#.utf8))
                #expect(collections.error?.domain == "BLIP")
                #expect(collections.error?.code == 404)
                #expect(collections.error?.message == "No handler for BLIP request")
                let noClient = try await connection.send(properties: ["Profile": "getCheckpoint"])
                #expect(noClient.error?.code == 400)
            }
            // The same checkpoint through the REST API's _local documents.
            let local = try await client.send(port: ports.adminPort, path: "/todo/_local/checkpoint%2Fcp-abc")
            #expect(local.status == 200)
            #expect(try JSONValue(parsing: Array(local.body))["remote"] == 5)
        }
    }
}
