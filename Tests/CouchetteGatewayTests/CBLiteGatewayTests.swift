import CouchetteCore
import CouchetteTestSupport
import Foundation
import Logging
import Testing

@testable import CouchetteGateway

/// A genuine Couchbase Lite 3.0 client (`../shared/tools/cblite/cblite`: LiteCore 3.0's storage and BLIP replicator,
/// what Couchbase Lite 3 apps run) syncing with the gateway over `/{db}/_blipsync` as an app would, each test written
/// from the device's side: what it holds after the sync.
@Suite(
    "A Couchbase Lite 3 client syncs with the gateway", .serialized, .timeLimit(.minutes(5)),
    .enabled(if: CBLite.isRequired || CBLite.shared != nil, Comment(rawValue: CBLite.absenceReason)))
struct CBLiteGatewayTests {
    /// `alice` reads channels `a` and `c`, `bob` reads `b`; the default sync function (`channel(doc.channels)`).
    static func config() -> GatewayConfig {
        GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "todo",
                users: [
                    "GUEST": UserConfig(name: "GUEST", disabled: true),
                    "alice": UserConfig(name: "alice", password: "pass", adminChannels: ["a", "c"]),
                    "bob": UserConfig(name: "bob", password: "pass", adminChannels: ["b"]),
                ])
        ])
    }

    static func url(_ ports: BoundPorts) -> String { "ws://127.0.0.1:\(ports.publicPort)/todo" }

    /// Runs `body` with a gateway and a new device database, removed afterwards.
    static func withDevice(
        _ body: @escaping @Sendable (HTTPTestClient, BoundPorts, CBLite.Database) async throws -> Void
    ) async throws {
        let device = try CBLite.required().database()
        defer { device.remove() }
        let server = try GatewayServer(config: config(), logger: GatewayFixture.logger)
        try await StreamingGateway.run(server, deadline: .seconds(240)) { _, client, ports in
            try await body(client, ports, device)
        }
    }

    static func bulkDocs(_ client: HTTPTestClient, _ ports: BoundPorts, _ docs: [JSONValue], newEdits: Bool = true)
        async throws
    {
        let reply = try await client.send(
            "POST", port: ports.adminPort, path: "/todo/_bulk_docs",
            json: ["docs": .array(docs), "new_edits": .bool(newEdits)])
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
    }

    static func document(_ client: HTTPTestClient, _ ports: BoundPorts, _ id: String, query: String = "") async throws
        -> JSONValue
    {
        let reply = try await client.send(port: ports.adminPort, path: "/todo/\(id)\(query)")
        try #require(reply.status == 200, "GET \(id): \(reply.status) \(reply.text)")
        return try reply.jsonValue()
    }

    // MARK: - Pull and push

    @Test("One-shot pull and push: the device gets the user's channels only, and its own documents reach the server")
    func oneShot() async throws {
        try await Self.withDevice { client, ports, device in
            try await ChangesTests.put(client, port: ports.adminPort, "list1", ["channels": ["a"], "name": "Groceries"])
            try await ChangesTests.put(client, port: ports.adminPort, "secret", ["channels": ["b"], "name": "Bob's"])
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await device.documentIDs() == ["list1"])
            #expect(try await device.body("list1")?["name"] == "Groceries")

            try await device.put("task1", ["channels": ["a"], "task": "Milk"])
            try await device.push(to: Self.url(ports), user: "alice:pass")
            let stored = try await Self.document(client, ports, "task1")
            #expect(stored["task"] == "Milk")
            #expect(stored["_rev"]?.stringValue == (try await device.currentRevision("task1")))
        }
    }

    @Test("Continuous pull follows the server's writes; continuous push sends what the device holds")
    func continuous() async throws {
        try await Self.withDevice { client, ports, device in
            try await ChangesTests.put(client, port: ports.adminPort, "first", ["channels": ["a"]])
            let puller = try device.startContinuous("pull", Self.url(ports), user: "alice:pass")
            defer { puller.kill() }
            try await device.waitUntil("the first document") { try await $0.documentIDs() == ["first"] }
            try await ChangesTests.put(client, port: ports.adminPort, "second", ["channels": ["a"], "n": 2])
            try await device.waitUntil("the second document") { try await $0.body("second")?["n"] == 2 }
            puller.kill()
            _ = try? await puller.waitForExit(within: .seconds(10))

            try await device.put("mine", ["channels": ["a"], "from": "device"])
            let pusher = try device.startContinuous("push", Self.url(ports), user: "alice:pass")
            defer { pusher.kill() }
            try await withDeadline(.seconds(30), "the continuous push") {
                while try await client.send(port: ports.adminPort, path: "/todo/mine").status != 200 {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(try await Self.document(client, ports, "mine")["from"] == "device")
        }
    }

    // MARK: - The four bugs a genuine client hit

    @Test("Regression: a deletion or a channel removal after a first continuous pull (activeOnly) reaches the device")
    func deletionsAfterFirstSync() async throws {
        try await Self.withDevice { client, ports, device in
            let gone = try await ChangesTests.put(client, port: ports.adminPort, "gone", ["channels": ["a"]])
            let moved = try await ChangesTests.put(client, port: ports.adminPort, "moved", ["channels": ["a"]])
            try await ChangesTests.put(client, port: ports.adminPort, "kept", ["channels": ["a"]])
            // An empty database with no checkpoint: LiteCore asks with activeOnly=true.
            let puller = try device.startContinuous("pull", Self.url(ports), user: "alice:pass")
            defer { puller.kill() }
            try await device.waitUntil("the first sync") { try await $0.documentIDs() == ["gone", "moved", "kept"] }
            try await ChangesTests.delete(client, port: ports.adminPort, "gone", rev: gone)
            try await ChangesTests.put(client, port: ports.adminPort, "moved", ["channels": ["b"]], rev: moved)
            try await device.waitUntil("the deletion and the removal") { try await $0.documentIDs() == ["kept"] }
            #expect(try await device.isDeleted("gone"))
        }
    }

    @Test("Regression: a document edited 25 times on the device between syncs is pushed, joined to the server's revision")
    func manyEditsBetweenSyncs() async throws {
        try await Self.withDevice { client, ports, device in
            try await device.put("note", ["channels": ["a"], "n": 0])
            try await device.push(to: Self.url(ports), user: "alice:pass")
            for n in 1...25 { try await device.put("note", ["channels": ["a"], "n": .int(Int64(n))]) }
            let current = try #require(try await device.currentRevision("note"))
            #expect(current.hasPrefix("26-"))
            try await device.push(to: Self.url(ports), user: "alice:pass")
            let stored = try await Self.document(client, ports, "note", query: "?revs=true")
            #expect(stored["_rev"]?.stringValue == current)
            #expect(stored["n"] == 25)
            // No conflict was made: the pushed revisions descend from the first one.
            let all = try await client.send(port: ports.adminPort, path: "/todo/note?open_revs=all", headers: ["Accept": "application/json"])
            #expect(try all.jsonValue().arrayValue?.count == 1)
            // A second device gets the same document.
            let second = try CBLite.required().database(named: "second")
            defer { second.remove() }
            try await second.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await second.currentRevision("note") == current)
            #expect(try await second.body("note")?["n"] == 25)
        }
    }

    @Test("A one-shot pull that completes holds every document it was told about (a batch of several frames)")
    func oneShotPullIsComplete() async throws {
        try await Self.withDevice { client, ports, device in
            // One batch (LiteCore asks for 200), its long random IDs making it several 4 KiB frames: the caught-up
            // `[]` (one frame) used to overtake it, and LiteCore, caught up with nothing pending, ended the pull.
            var ids: Set<String> = []
            var docs: [JSONValue] = []
            for index in 0..<200 {
                let id = "doc-\(index)-" + (0..<3).map { _ in UUID().uuidString }.joined()
                ids.insert(id)
                docs.append(["_id": .string(id), "channels": ["a"], "n": .int(Int64(index))])
            }
            try await Self.bulkDocs(client, ports, docs)
            for round in 0..<3 {
                let fresh = try CBLite.required().database(named: "round\(round)")
                defer { fresh.remove() }
                try await fresh.pull(from: Self.url(ports), user: "alice:pass")
                #expect(try await fresh.documentIDs() == ids, "round \(round)")
            }
        }
    }

    @Test("Regression: a conflicted document reaches the device as the server's winner, not its deleted branch")
    func conflictedDocumentArrivesAsWinner() async throws {
        try await Self.withDevice { client, ports, device in
            try await Self.bulkDocs(
                client, ports,
                [
                    ["_id": "c", "_rev": "1-aaaa", "channels": ["a"], "_revisions": ["start": 1, "ids": ["aaaa"]]],
                    [
                        "_id": "c", "_rev": "2-bbbb", "channels": ["a"], "v": "live",
                        "_revisions": ["start": 2, "ids": ["bbbb", "aaaa"]],
                    ],
                    [
                        "_id": "c", "_rev": "3-dddd", "_deleted": true, "channels": ["a"],
                        "_revisions": ["start": 3, "ids": ["dddd", "cccc", "aaaa"]],
                    ],
                ], newEdits: false)
            #expect(try await Self.document(client, ports, "c")["_rev"] == "2-bbbb")
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await device.currentRevision("c") == "2-bbbb")
            #expect(try await device.body("c")?["v"] == "live")
            #expect(try await !device.isDeleted("c"))
        }
    }

    // MARK: - Blobs, conflicts, access

    @Test("A blob made on the device reaches the server and a second device")
    func blobs() async throws {
        try await Self.withDevice { client, ports, device in
            try await device.put("seed", ["channels": ["a"]])
            let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let blob = try device.storeBlob(bytes, contentType: "image/jpeg")
            try await device.put("photo", ["channels": ["a"], "image": blob])
            try await device.push(to: Self.url(ports), user: "alice:pass")

            let stored = try await Self.document(client, ports, "photo")
            let name = try #require(stored["_attachments"]?.objectValue?.keys.first)
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
            let attachment = try await client.send(port: ports.adminPort, path: "/todo/photo/\(encoded)")
            #expect(attachment.status == 200)
            #expect(Array(attachment.body) == bytes)

            let second = try CBLite.required().database(named: "second")
            defer { second.remove() }
            try await second.pull(from: Self.url(ports), user: "alice:pass")
            let digest = try #require(blob["digest"]?.stringValue)
            #expect(try await second.body("photo")?["image"]?["digest"]?.stringValue == digest)
            #expect(second.blob(digest) == bytes)
        }
    }

    @Test("A conflict: the device's push of a stale edit is refused, the server keeps its revision, a pull shows the conflict")
    func conflict() async throws {
        try await Self.withDevice { client, ports, device in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "k", ["channels": ["a"], "v": 1])
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            try await device.put("k", ["channels": ["a"], "v": "device"])
            let server = try await ChangesTests.put(
                client, port: ports.adminPort, "k", ["channels": ["a"], "v": "server"], rev: first)
            // The push ends without storing the device's edit (LiteCore records a 409 for the document).
            _ = try await device.failingReplication("push", Self.url(ports), user: "alice:pass")
            #expect(try await Self.document(client, ports, "k")["_rev"]?.stringValue == server)
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await device.documentIDs(conflicted: true) == ["k"])
        }
    }

    @Test("A removal from the user's channels and a revoked channel purge the documents from the device")
    func removalAndRevocationPurge() async throws {
        try await Self.withDevice { client, ports, device in
            let removed = try await ChangesTests.put(client, port: ports.adminPort, "removed", ["channels": ["a"]])
            try await ChangesTests.put(client, port: ports.adminPort, "revoked", ["channels": ["c"]])
            try await ChangesTests.put(client, port: ports.adminPort, "stays", ["channels": ["a"]])
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await device.documentIDs() == ["removed", "revoked", "stays"])

            try await ChangesTests.put(client, port: ports.adminPort, "removed", ["channels": ["b"]], rev: removed)
            let revoke = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/alice", json: ["admin_channels": ["a"]])
            try #require(revoke.status == 200, "\(revoke.status) \(revoke.text)")
            try await device.pull(from: Self.url(ports), user: "alice:pass")
            #expect(try await device.documentIDs() == ["stays"])
            #expect(try await device.currentRevision("removed") == nil)
            #expect(try await device.currentRevision("revoked") == nil)
        }
    }

    @Test("A wrong password fails the replication with 401 and changes nothing")
    func wrongPassword() async throws {
        try await Self.withDevice { client, ports, device in
            try await ChangesTests.put(client, port: ports.adminPort, "list1", ["channels": ["a"]])
            let outcome = try await device.failingReplication("pull", Self.url(ports), user: "alice:wrong")
            #expect(outcome.status != 0)
            #expect(outcome.errors.contains("401") || outcome.output.contains("401"), "\(outcome)")
            #expect(try await device.documentIDs().isEmpty)
        }
    }

    @Test("A sync connection logs who connected and what moved, and no error for the 401 challenge it starts with")
    func logging() async throws {
        var config = Self.config()
        config.log = ["HTTP"]
        let lines = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        let device = try CBLite.required().database()
        defer { device.remove() }
        let server = try GatewayServer(config: config, logger: logger)
        try await StreamingGateway.run(server, deadline: .seconds(120)) { _, client, ports in
            try await ChangesTests.put(client, port: ports.adminPort, "list1", ["channels": ["a"]])
            try await ChangesTests.put(client, port: ports.adminPort, "list2", ["channels": ["a"]])
            try await device.put("mine", ["channels": ["a"]])
            try await device.push(to: Self.url(ports), user: "alice:pass")
            try await device.pull(from: Self.url(ports), user: "alice:pass")
        }
        #expect(lines.contains { $0.contains("Upgraded to WebSocket protocol BLIP_3+CBMobile_3 (as alice)") })
        #expect(lines.contains { $0.contains("BLIP+WebSocket connection closed: pushed 1, pulled 0 revisions") })
        #expect(lines.contains { $0.contains("BLIP+WebSocket connection closed: pushed 0, pulled 2 revisions") })
        #expect(lines.lines(atLeast: .warning).isEmpty, "\(lines.lines(atLeast: .warning))")
    }

    @Test("Over wss:// with the gateway's self-signed certificate: a push from one device reaches another")
    func secureWebSocket() async throws {
        let identity = try TestCertificates.selfSigned()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cblite-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pem = try identity.writePEM(in: folder)
        var config = Self.config()
        config.sslCert = pem.certificate
        config.sslKey = pem.key
        let first = try CBLite.required().database(named: "first")
        let second = try CBLite.required().database(named: "second")
        defer {
            first.remove()
            second.remove()
        }
        let server = try GatewayServer(config: config, logger: GatewayFixture.logger)
        try await StreamingGateway.run(server, deadline: .seconds(120)) { _, _, ports in
            // This client's TLS does not match IP addresses in certificates: `localhost` it is.
            let url = "wss://localhost:\(ports.publicPort)/todo"
            try await first.put("secure", ["channels": ["a"], "over": "tls"])
            try await first.push(to: url, user: "alice:pass", extra: ["--cacert", pem.certificate])
            try await second.pull(from: url, user: "alice:pass", extra: ["--cacert", pem.certificate])
            #expect(try await second.body("secure")?["over"] == "tls")
        }
    }
}
