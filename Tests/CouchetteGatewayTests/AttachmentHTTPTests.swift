import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

/// `/{db}/{doc}/{attachment}` over real sockets (spec: gateway-rest-api.md §6).
@Suite(.timeLimit(.minutes(5))) struct AttachmentHTTPTests {
    static let hello = Array("hello world".utf8)
    static let helloDigest = AttachmentDigest.sha1(of: hello).description

    @Test func inlineToStubToBytesToRangesToPutToDelete() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let admin = ports.adminPort
            let created = try await client.send(
                "PUT", port: admin, path: "/todo/doc",
                json: ["title": "t", "_attachments": ["note.txt": ["content_type": "text/plain", "data": "aGVsbG8gd29ybGQ="]]])
            let first = try created.writtenRevision()
            // Inline data became a stub.
            let stub = try await client.send(port: admin, path: "/todo/doc").jsonValue()["_attachments"]?["note.txt"]
            #expect(stub == ["content_type": "text/plain", "digest": .string(Self.helloDigest), "length": 11, "revpos": 1, "stub": true])

            // The bytes, with their headers; the admin port names the file.
            let bytes = try await client.send(port: admin, path: "/todo/doc/note.txt")
            #expect(bytes.status == 200 && [UInt8](bytes.body) == Self.hello)
            #expect(bytes.header("Content-Type") == "text/plain")
            #expect(bytes.header("Content-Length") == "11")
            #expect(bytes.header("Etag") == "\"\(Self.helloDigest)\"")
            #expect(bytes.header("Accept-Ranges") == "bytes")
            #expect(bytes.header("Content-Disposition") == #"attachment; filename="note.txt""#)
            let publicBytes = try await client.send(port: ports.publicPort, path: "/todo/doc/note.txt?rev=\(first)")
            #expect(publicBytes.status == 200 && publicBytes.header("Content-Disposition") == nil)
            let head = try await client.send("HEAD", port: admin, path: "/todo/doc/note.txt")
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "11")
            let cached = try await client.send(
                port: admin, path: "/todo/doc/note.txt", headers: ["If-None-Match": "\"\(Self.helloDigest)\""])
            #expect(cached.status == 304)

            // Ranges.
            let range = try await client.send(port: admin, path: "/todo/doc/note.txt", headers: ["Range": "bytes=6-"])
            #expect(range.status == 206 && range.text == "world")
            #expect(range.header("Content-Range") == "bytes 6-10/11")
            let suffix = try await client.send(port: admin, path: "/todo/doc/note.txt", headers: ["Range": "bytes=-5"])
            #expect(suffix.status == 206 && suffix.text == "world")
            let outside = try await client.send(port: admin, path: "/todo/doc/note.txt", headers: ["Range": "bytes=20-30"])
            #expect(outside.status == 416 && outside.header("Content-Range") == "bytes */11")

            // PUT a second attachment: the first is kept, with its revpos.
            let put = try await client.send(
                "PUT", port: admin, path: "/todo/doc/image.png?rev=\(first)", headers: ["Content-Type": "image/png"],
                body: [0x89, 0x50, 0x4e, 0x47])
            #expect(put.status == 201)
            let putJSON = try put.jsonValue()
            #expect(putJSON["ok"] == true && putJSON["id"] == "doc")
            let second = try put.writtenRevision()
            #expect(second.hasPrefix("2-") && put.header("Etag") == "\"\(second)\"")
            let afterPut = try await client.send(port: admin, path: "/todo/doc").jsonValue()
            #expect(afterPut["title"] == "t")
            #expect(afterPut["_attachments"]?["note.txt"]?["revpos"] == 1)
            #expect(afterPut["_attachments"]?["image.png"]?["revpos"] == 2)
            #expect(afterPut["_attachments"]?["image.png"]?["content_type"] == "image/png")
            #expect(try await client.send(port: admin, path: "/todo/doc/image.png").body == Data([0x89, 0x50, 0x4e, 0x47]))
            // Replacing with If-Match, no Content-Type: application/octet-stream.
            let replaced = try await client.send(
                "PUT", port: admin, path: "/todo/doc/image.png", headers: ["If-Match": "\"\(second)\""], body: [1, 2])
            #expect(replaced.status == 201)
            let third = try replaced.writtenRevision()
            #expect(try await client.send(port: admin, path: "/todo/doc/image.png").header("Content-Type") == "application/octet-stream")
            // The older revision still has the older bytes.
            #expect(try await client.send(port: admin, path: "/todo/doc/image.png?rev=\(second)").body.count == 4)
            // A stale revision conflicts.
            let stale = try await client.send("PUT", port: admin, path: "/todo/doc/x?rev=\(first)", body: [1])
            #expect(stale.status == 409)

            // DELETE one attachment.
            #expect(try await client.send("DELETE", port: admin, path: "/todo/doc/note.txt").status == 409)
            let deleted = try await client.send("DELETE", port: admin, path: "/todo/doc/note.txt?rev=\(third)")
            #expect(deleted.status == 200)
            #expect(try deleted.writtenRevision().hasPrefix("4-"))
            let gone = try await client.send(port: admin, path: "/todo/doc/note.txt")
            #expect(gone.status == 404)
            #expect(try gone.jsonValue() == ["error": "not_found", "reason": "missing attachment note.txt"])
            let remaining = try await client.send(port: admin, path: "/todo/doc").jsonValue()["_attachments"]
            #expect(remaining?.objectValue?.keys.sorted() == ["image.png"])
            #expect(try await client.send(port: admin, path: "/todo/nothing/note.txt").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/doc/note.txt?rev=garbage").status == 400)
        }
    }

    @Test func putWithoutRevisionCreatesTheDocumentAndNamesMayHoldSlashes() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.publicPort
            let created = try await client.send(
                "PUT", port: port, path: "/todo/new/dir%2Fa%20b.txt", headers: ["Content-Type": "text/plain"],
                body: Self.hello)
            #expect(created.status == 201)
            let rev = try created.writtenRevision()
            #expect(rev.hasPrefix("1-"))
            let body = try await client.send(port: port, path: "/todo/new").jsonValue()
            #expect(body["_attachments"]?.objectValue?.keys.sorted() == ["dir/a b.txt"])
            let bytes = try await client.send(port: port, path: "/todo/new/dir%2Fa%20b.txt")
            #expect(bytes.status == 200 && [UInt8](bytes.body) == Self.hello)
            // The document exists now: a revision is required.
            #expect(try await client.send("PUT", port: port, path: "/todo/new/other", body: [1]).status == 409)
            // An empty body is an empty attachment.
            let empty = try await client.send("PUT", port: port, path: "/todo/new/empty?rev=\(rev)", body: [])
            #expect(empty.status == 201)
            let emptyBytes = try await client.send(port: port, path: "/todo/new/empty")
            #expect(emptyBytes.status == 200 && emptyBytes.body.isEmpty && emptyBytes.header("Content-Length") == "0")
            #expect(try await client.send(port: port, path: "/todo/new/empty", headers: ["Range": "bytes=0-"]).status == 416)
            // Reserved names still route to their own endpoints.
            #expect(try await client.send("DELETE", port: port, path: "/todo/_bulk_get/x").status == 404)
        }
    }

    /// A revision the sync function refuses stores nothing, its attachments included: a later document cannot name
    /// them by digest (a stub of a stored digest is accepted; of an unknown one, 400).
    @Test func aRefusedRevisionLeavesNoAttachmentBehind() async throws {
        var database = GatewayFixture.guestDatabase("db")
        database.sync = "function(doc) { if (doc.refuse) throw({forbidden: 'refused'}); channel('*'); }"
        try await GatewayFixture.withRunningGateway(GatewayFixture.config(databases: [database])) { client, ports in
            let port = ports.adminPort
            let refusedData = Array("refused bytes".utf8)
            let refusedDigest = AttachmentDigest.sha1(of: refusedData).description
            let inline: (String) -> JSONValue = { ["_attachments": ["a": ["data": .string($0)]]] }
            var refused = inline(Data(refusedData).base64EncodedString())
            refused["refuse"] = true
            #expect(try await client.send("PUT", port: port, path: "/db/r", json: refused).status == 403)
            var refusedInBatch = refused
            refusedInBatch["_id"] = "r2"
            let bulk = try await client.send("POST", port: port, path: "/db/_bulk_docs", json: ["docs": [refusedInBatch]])
            #expect(try bulk.jsonValue()[0]?["status"] == 403)
            let stub: JSONValue = ["_attachments": ["a": ["stub": true, "digest": .string(refusedDigest), "revpos": 1]]]
            let naming = try await client.send("PUT", port: port, path: "/db/s", json: stub)
            #expect(naming.status == 400 && naming.text.contains("Unknown attachment stub"), "\(naming.text)")
            // Accepted, the same bytes are stored and can be named.
            #expect(try await client.send("PUT", port: port, path: "/db/ok", json: inline(Data(refusedData).base64EncodedString())).status == 201)
            let named = try await client.send("PUT", port: port, path: "/db/s", json: stub)
            #expect(named.status == 201, "\(named.text)")
        }
    }

    @Test func attachmentsFollowTheDocumentsChannels() async throws {
        try await GatewayFixture.withRunningGateway(ReadAccessFixture.config()) { client, ports in
            let secret = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/secret",
                json: ["channels": "private", "_attachments": ["a": ["data": "aGVsbG8="]]])
            let secretRev = try secret.writtenRevision()
            let open = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/open",
                json: ["channels": "public", "_attachments": ["a": ["data": "aGVsbG8="]]])
            let openRev = try open.writtenRevision()
            let port = ports.publicPort
            let alice = ReadAccessFixture.alice
            #expect(try await client.send(port: port, path: "/todo/secret/a", user: alice).status == 403)
            #expect(try await client.send(port: port, path: "/todo/secret/a?rev=\(secretRev)", user: alice).status == 403)
            #expect(try await client.send("PUT", port: port, path: "/todo/secret/b?rev=\(secretRev)", body: [1], user: alice).status == 403)
            #expect(try await client.send("DELETE", port: port, path: "/todo/secret/a?rev=\(secretRev)", user: alice).status == 403)
            let readable = try await client.send(port: port, path: "/todo/open/a", user: alice)
            #expect(readable.status == 200 && readable.text == "hello")
            let written = try await client.send("PUT", port: port, path: "/todo/open/b?rev=\(openRev)", body: [1], user: alice)
            #expect(written.status == 201)
        }
    }
}
