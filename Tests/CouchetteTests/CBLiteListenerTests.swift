import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

/// A genuine Couchbase Lite 3.0 client (`../shared/tools/cblite/cblite`) syncing with a ``URLEndpointListener`` —
/// what `couchette serve` runs — as a Couchbase Lite 3 app syncs peer-to-peer, each test written from the device's
/// side.
@Suite(
    "A Couchbase Lite 3 client syncs with a Couchette listener", .serialized, .timeLimit(.minutes(5)),
    .enabled(if: CBLite.isRequired || CBLite.shared != nil, Comment(rawValue: CBLite.absenceReason)))
struct CBLiteListenerTests {
    /// Serves `database` with Basic credentials `alice:pass` (TLS with `identity` when given), runs `body` with the
    /// `ws(s)://…/<name>` URL and a new device, then stops.
    static func serving(
        _ name: String = "tablet", identity: TLSIdentity? = nil,
        _ body: (Database, String, CBLite.Database) async throws -> Void
    ) async throws {
        let directory = TemporaryDirectory()
        let database = try directory.open(name)
        defer { try? database.close() }
        var config = URLEndpointListenerConfiguration(collections: [try database.defaultCollection()])
        config.networkInterface = "127.0.0.1"
        config.disableTLS = identity == nil
        config.tlsIdentity = identity
        config.authenticator = ListenerPasswordAuthenticator(user: "alice", password: "pass")
        let listener = URLEndpointListener(config: config)
        try await listener.start()
        let device = try CBLite.required().database()
        defer { device.remove() }
        do {
            let port = try #require(listener.port)
            let url = (identity == nil ? "ws://127.0.0.1:" : "wss://localhost:") + "\(port)/\(name)"
            try await body(database, url, device)
        } catch {
            await listener.stop()
            throw error
        }
        await listener.stop()
    }

    @Test("One-shot pull and push with credentials")
    func oneShot() async throws {
        try await Self.serving { database, url, device in
            let documents = try database.defaultCollection()
            _ = try documents.putProperties(["name": "Groceries"], documentID: "list1")
            try await device.pull(from: url, user: "alice:pass")
            #expect(try await device.body("list1")?["name"] == "Groceries")
            try await device.put("task1", ["task": "Milk"])
            try await device.push(to: url, user: "alice:pass")
            let stored = try #require(try documents.document(id: "task1"))
            #expect(stored.string(forKey: "task") == "Milk")
            #expect(stored.revisionID == (try await device.currentRevision("task1")))
        }
    }

    @Test("Regression: a deletion after a first continuous pull (activeOnly) reaches the device")
    func deletionAfterFirstSync() async throws {
        try await Self.serving { database, url, device in
            let documents = try database.defaultCollection()
            _ = try documents.putProperties(["v": 1], documentID: "gone")
            _ = try documents.putProperties(["v": 1], documentID: "kept")
            let puller = try device.startContinuous("pull", url, user: "alice:pass")
            defer { puller.kill() }
            try await device.waitUntil("the first sync") { try await $0.documentIDs() == ["gone", "kept"] }
            try documents.delete(document: try #require(try documents.document(id: "gone")))
            try await device.waitUntil("the deletion") { try await $0.documentIDs() == ["kept"] }
            #expect(try await device.isDeleted("gone"))
        }
    }

    @Test("Regression: a document edited 25 times on the device between syncs is pushed, joined to the listener's revision")
    func manyEditsBetweenSyncs() async throws {
        try await Self.serving { database, url, device in
            try await device.put("note", ["n": 0])
            try await device.push(to: url, user: "alice:pass")
            for n in 1...25 { try await device.put("note", ["n": .int(Int64(n))]) }
            let current = try #require(try await device.currentRevision("note"))
            try await device.push(to: url, user: "alice:pass")
            let documents = try database.defaultCollection()
            #expect(try documents.document(id: "note")?.revisionID == current)
            #expect(try documents.document(id: "note")?.int(forKey: "n") == 25)
            #expect(try documents.leafRevisions(documentID: "note").count == 1)
        }
    }

    @Test("Regression: a conflicted document reaches the device as the listener's winner, not its deleted branch")
    func conflictedDocumentArrivesAsWinner() async throws {
        try await Self.serving { database, url, device in
            let documents = try database.defaultCollection()
            try documents.putExistingRevision(documentID: "c", properties: ["v": "base"], revisionHistory: ["1-aaaa"])
            try documents.putExistingRevision(
                documentID: "c", properties: ["v": "live"], revisionHistory: ["2-bbbb", "1-aaaa"])
            try documents.putExistingRevision(
                documentID: "c", properties: ["_deleted": true], revisionHistory: ["3-dddd", "2-cccc", "1-aaaa"])
            #expect(try documents.document(id: "c")?.revisionID == "2-bbbb")
            try await device.pull(from: url, user: "alice:pass")
            #expect(try await device.currentRevision("c") == "2-bbbb")
            #expect(try await device.body("c")?["v"] == "live")
        }
    }

    @Test("A blob made on the device reaches the listener's database and a second device")
    func blobs() async throws {
        try await Self.serving { database, url, device in
            try await device.put("seed", ["v": 1])
            let bytes = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }
            let blob = try device.storeBlob(bytes, contentType: "image/png")
            try await device.put("photo", ["image": blob])
            try await device.push(to: url, user: "alice:pass")
            let stored = try #require(try database.defaultCollection().document(id: "photo")?.blob(forKey: "image"))
            #expect(stored.content.map(Array.init) == bytes)

            let second = try CBLite.required().database(named: "second")
            defer { second.remove() }
            try await second.pull(from: url, user: "alice:pass")
            #expect(second.blob(try #require(blob["digest"]?.stringValue)) == bytes)
        }
    }

    @Test("A wrong password fails the replication with 401")
    func wrongPassword() async throws {
        try await Self.serving { database, url, device in
            _ = try database.defaultCollection().putProperties(["v": 1], documentID: "list1")
            let outcome = try await device.failingReplication("pull", url, user: "alice:wrong")
            #expect(outcome.status != 0)
            #expect(outcome.errors.contains("401") || outcome.output.contains("401"), "\(outcome)")
            #expect(try await device.documentIDs().isEmpty)
        }
    }

    @Test("Over wss:// with the listener's self-signed identity (couchette serve --tls)")
    func secureWebSocket() async throws {
        let identity = try TLSIdentity.anonymous()
        let files = TemporaryDirectory()
        let certificate = files.path + "/listener.pem"
        let der = try #require(identity.certificates.first)
        let lines = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        try "-----BEGIN CERTIFICATE-----\n\(lines)\n-----END CERTIFICATE-----\n".write(
            toFile: certificate, atomically: true, encoding: .utf8)
        try await Self.serving(identity: identity) { database, url, device in
            _ = try database.defaultCollection().putProperties(["over": "tls"], documentID: "secure")
            try await device.pull(from: url, user: "alice:pass", extra: ["--cacert", certificate])
            #expect(try await device.body("secure")?["over"] == "tls")
        }
    }
}
