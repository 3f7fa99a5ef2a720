import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - Shared helpers

/// A gateway whose `todo` database lets `GUEST` read everything and `alice` (password `pass`) only the
/// `public` channel.
enum ReadAccessFixture {
    static func config() -> GatewayConfig {
        GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "todo",
                users: [
                    "GUEST": UserConfig(name: "GUEST", adminChannels: ["*"]),
                    "alice": UserConfig(name: "alice", password: "pass", adminChannels: ["public"]),
                ])
        ])
    }

    static let alice = ("alice", "pass")
}

extension HTTPTestClient.Reply {
    /// The body parsed as multipart with the reply's `Content-Type`.
    func multipartBody() throws -> MultipartBody {
        let contentType = try #require(header("Content-Type"))
        return try MultipartBody(parsing: [UInt8](body), contentType: contentType)
    }

    /// The `rev` of a write's `{"ok":true,"id","rev"}` reply.
    func writtenRevision() throws -> String {
        try #require(try jsonValue()["rev"]?.stringValue)
    }
}

extension MIMEPart {
    /// The part's body parsed as JSON.
    func jsonValue() throws -> JSONValue { try JSONValue(parsing: body) }
}

/// A `multipart/related` request body: the JSON first, then the given attachment parts.
func multipartRelatedRequest(_ json: JSONValue, _ attachments: [(name: String?, bytes: [UInt8])]) -> (headers: [String: String], body: [UInt8]) {
    let parts = [MIMEPart.json(json)]
        + attachments.map { MIMEPart(body: $0.bytes, contentType: "application/octet-stream", filename: $0.name) }
    let multipart = MultipartBody(subtype: "related", parts: parts)
    return (["Content-Type": multipart.contentType], multipart.serialized())
}

// MARK: - DocumentHTTPTests

/// `GET`/`PUT /{db}/{doc}` over real sockets: read options, JSON and multipart forms, negotiation, access
/// control and bad input (spec: gateway-rest-api.md §5).
@Suite(.timeLimit(.minutes(5))) struct DocumentHTTPTests {
    /// 300 bytes: larger than the 200 bytes sent inline in multipart responses.
    static let large = (0..<300).map { UInt8($0 % 251) }

    /// Creates `doc` at generation 2: `small.txt` ("hello", revpos 1) and `large.bin` (revpos 2).
    private func makeDocument(_ client: HTTPTestClient, _ port: Int) async throws -> (first: String, second: String) {
        let first = try await client.send(
            "PUT", port: port, path: "/todo/doc",
            json: ["title": "one", "channels": "public",
                   "_attachments": ["small.txt": ["content_type": "text/plain", "data": "aGVsbG8="]]])
        #expect(first.status == 201)
        let firstRev = try first.writtenRevision()
        let second = try await client.send(
            "PUT", port: port, path: "/todo/doc?rev=\(firstRev)",
            json: ["title": "two", "channels": "public",
                   "_attachments": [
                       "small.txt": ["stub": true, "revpos": 1],
                       "large.bin": ["content_type": "application/x-large", "data": .string(Data(Self.large).base64EncodedString())],
                   ]])
        #expect(second.status == 201)
        return (firstRev, try second.writtenRevision())
    }

    @Test func readOptionsMatrix() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.adminPort
            let (first, second) = try await makeDocument(client, port)
            func get(_ query: String) async throws -> JSONValue {
                let reply = try await client.send(port: port, path: "/todo/doc\(query)")
                #expect(reply.status == 200, "\(query): \(reply.text)")
                return try reply.jsonValue()
            }
            let plain = try await get("")
            #expect(plain["_rev"] == .string(second) && plain["title"] == "two")
            #expect(plain["_attachments"]?["large.bin"]?["stub"] == true)
            #expect(plain["_attachments"]?["large.bin"]?["data"] == nil)
            #expect(plain["_revisions"] == nil && plain["_exp"] == nil)
            #expect(try await get("?rev=\(first)")["title"] == "one")
            #expect(try await get("?revs=true")["_revisions"]?["ids"]?.arrayValue?.count == 2)
            #expect(try await get("?revs=true&revs_limit=1")["_revisions"]?["ids"]?.arrayValue?.count == 1)
            #expect(try await get("?revs_info=true")["_revs_info"]?[1]?["rev"] == .string(first))
            let full = try await get("?attachments=true")
            #expect(full["_attachments"]?["small.txt"]?["data"] == "aGVsbG8=")
            #expect(full["_attachments"]?["large.bin"]?["data"] == .string(Data(Self.large).base64EncodedString()))
            #expect(full["_attachments"]?["large.bin"]?["stub"] == nil)
            let since = try await get("?attachments=true&atts_since=%5B%22\(first)%22%5D&revs=true")
            #expect(since["_attachments"]?["small.txt"]?["stub"] == true)
            #expect(since["_attachments"]?["large.bin"]?["data"] != nil)
            // atts_since doubles as revs_from.
            #expect(since["_revisions"]?["ids"]?.arrayValue?.count == 2)
            #expect(try await get("?show_exp=true")["_exp"] == nil)
            let all = try await client.send(port: port, path: "/todo/doc?open_revs=all")
            #expect(all.header("Content-Type") == "application/json")
            #expect(try all.jsonValue()[0]?["ok"]?["_rev"] == .string(second))
            let some = try await get("?open_revs=%5B%22\(second)%22,%229-z%22%5D")
            #expect(some[1] == ["missing": "9-z"])
            for (query, status) in [
                ("?rev=garbage", 400), ("?open_revs=nonsense", 400), ("?rev=9-z", 404), ("?atts_since=%5B1%5D", 400),
            ] {
                #expect(try await client.send(port: port, path: "/todo/doc\(query)").status == status, "\(query)")
            }
            #expect(try await client.send(port: port, path: "/todo/nothing?open_revs=all").status == 404)
        }
    }

    @Test func singleRevisionAsMultipartRelated() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.publicPort
            let (first, second) = try await makeDocument(client, ports.adminPort)
            let reply = try await client.send(
                port: port, path: "/todo/doc?attachments=true&revs=true", headers: ["Accept": "multipart/related"])
            #expect(reply.status == 200)
            #expect(reply.header("Etag") == "\"\(second)\"")
            let multipart = try reply.multipartBody()
            #expect(multipart.subtype == "related" && multipart.parts.count == 2)
            let json = try multipart.parts[0].jsonValue()
            #expect(multipart.parts[0].headers[.contentType] == "application/json")
            #expect(json["_attachments"]?["small.txt"]?["data"] == "aGVsbG8=")
            #expect(json["_attachments"]?["large.bin"]?["follows"] == true)
            #expect(json["_revisions"]?["start"] == 2)
            #expect(multipart.parts[1].body == Self.large)
            #expect(multipart.parts[1].headers[.contentDisposition] == #"attachment; filename="large.bin""#)
            #expect(multipart.parts[1].headers[.contentType] == "application/x-large")
            // Only the JSON part when the reader has everything.
            let since = try await client.send(
                port: port, path: "/todo/doc?attachments=true&atts_since=%5B%22\(second)%22%5D",
                headers: ["Accept": "multipart/related"])
            #expect(try since.multipartBody().parts.count == 1)
            // No bodies and JSON acceptable: JSON; JSON not acceptable: multipart.
            let json1 = try await client.send(port: port, path: "/todo/doc?rev=\(first)", headers: ["Accept": "multipart/related, application/json"])
            #expect(json1.header("Content-Type") == "application/json")
            let multi = try await client.send(port: port, path: "/todo/doc", headers: ["Accept": "multipart/related"])
            #expect(try multi.multipartBody().parts.count == 1)
            // `*/*` (or no Accept) keeps JSON, as CouchDB does.
            let star = try await client.send(port: port, path: "/todo/doc?attachments=true", headers: ["Accept": "*/*"])
            #expect(star.header("Content-Type") == "application/json")
        }
    }

    @Test func openRevisionsAsMultipartMixed() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.adminPort
            let (first, second) = try await makeDocument(client, port)
            // A conflicting branch off the first revision.
            let conflict = try await client.send(
                "PUT", port: port, path: "/todo/doc?new_edits=false",
                json: ["_rev": "2-zzz", "_revisions": ["start": 2, "ids": ["zzz", .string(String(first.dropFirst(2)))]],
                       "title": "conflict", "_attachments": ["small.txt": ["stub": true, "revpos": 1]]])
            #expect(conflict.status == 201)
            let reply = try await client.send(
                port: port, path: "/todo/doc?open_revs=%5B%22\(second)%22,%222-zzz%22,%229-missing%22%5D&attachments=true",
                headers: ["Accept": "multipart/mixed"])
            #expect(reply.status == 200)
            let multipart = try reply.multipartBody()
            #expect(multipart.subtype == "mixed" && multipart.parts.count == 3)
            // The winner carries attachment bodies: a nested multipart/related with the document headers.
            let nested = multipart.parts[0]
            #expect(nested.contentType?.mediaType == "multipart/related")
            #expect(nested.header("X-Doc-ID") == "doc" && nested.header("X-Rev-ID") == second)
            let related = try MultipartBody(parsing: nested.body, contentType: try #require(nested.headers[.contentType]))
            #expect(try related.parts[0].jsonValue()["_rev"] == .string(second))
            #expect(related.parts[1].body == Self.large)
            // The conflict's only attachment is small: inline, still nested because bodies are included.
            let other = try MultipartBody(parsing: multipart.parts[1].body, contentType: try #require(multipart.parts[1].headers[.contentType]))
            #expect(try other.parts[0].jsonValue()["_attachments"]?["small.txt"]?["data"] == "aGVsbG8=")
            // The missing revision is an error part.
            #expect(multipart.parts[2].headers[.contentType] == #"application/json; error="true""#)
            #expect(try multipart.parts[2].jsonValue() == ["missing": "9-missing"])
            // Without attachments: JSON parts.
            let plain = try await client.send(
                port: port, path: "/todo/doc?open_revs=all", headers: ["Accept": "multipart/mixed"])
            let parts = try plain.multipartBody().parts
            #expect(parts.count == 2)
            #expect(parts.allSatisfy { $0.headers[.contentType] == "application/json" })
            #expect(Set(parts.compactMap { $0.header("X-Rev-ID") }) == [second, "2-zzz"])
        }
    }

    /// `POST /{db}/` (gateway-rest-api.md §4): 200 with a generated 32-hex-digit ID (or the body's `_id`), the
    /// revision Sync Gateway would make, `Location` and `Etag`; the document reads back; a `_rev` is refused.
    @Test func postCreatesADocumentWithAGeneratedID() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let body: JSONValue = ["title": "posted", "channels": ["public"]]
            let reply = try await client.send("POST", port: ports.publicPort, path: "/todo/", json: body)
            #expect(reply.status == 200)
            let saved = try reply.jsonValue()
            let id = try #require(saved["id"]?.stringValue)
            #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "generated ID \(id)")
            let expectedRevision = try RevisionID.next(after: nil, body: body, deleted: false).description
            #expect(saved == ["ok": true, "id": .string(id), "rev": .string(expectedRevision)])
            #expect(reply.header("Location") == "/todo/\(id)")
            #expect(reply.header("Etag") == "\"\(expectedRevision)\"")

            let read = try await client.send(port: ports.publicPort, path: "/todo/\(id)")
            #expect(read.status == 200)
            #expect(try read.jsonValue() == ["_id": .string(id), "_rev": .string(expectedRevision), "title": "posted",
                                             "channels": ["public"]])

            // Each POST of the same body makes a new document.
            let again = try await client.send("POST", port: ports.publicPort, path: "/todo/", json: body)
            #expect(again.status == 200)
            #expect(try again.jsonValue()["id"]?.stringValue != id)

            let named = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/", json: ["_id": "named doc", "channels": ["public"]])
            #expect(named.status == 200)
            #expect(try named.jsonValue()["id"] == "named doc")
            #expect(named.header("Location") == "/todo/named%20doc")
            #expect((try await client.send(port: ports.publicPort, path: "/todo/named%20doc")).status == 200)

            let withRevision = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/", json: ["_rev": .string(expectedRevision)])
            #expect(withRevision.status == 404)
            #expect(try withRevision.jsonValue()["reason"] == "No previous revision to replace")
        }
    }

    @Test func unacceptableAcceptIs406() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            _ = try await makeDocument(client, ports.adminPort)
            for path in ["/todo/doc", "/todo/doc?open_revs=all"] {
                let reply = try await client.send(port: ports.publicPort, path: path, headers: ["Accept": "text/html"])
                #expect(reply.status == 406)
                #expect(try reply.jsonValue()["error"] == "Not Acceptable")
            }
        }
    }

    @Test func multipartPutRoundTripsIncludingReplicatedRevisions() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.publicPort
            let digest = AttachmentDigest.sha1(of: Self.large).description
            let (headers, body) = multipartRelatedRequest(
                ["title": "mp", "_attachments": [
                    "large.bin": ["follows": true, "content_type": "image/png", "length": 300, "digest": .string(digest)],
                    "inline.txt": ["data": "aGVsbG8="],
                ]],
                [("large.bin", Self.large)])
            let created = try await client.send("PUT", port: port, path: "/todo/mp", headers: headers, body: body)
            #expect(created.status == 201, "\(created.text)")
            let rev = try created.writtenRevision()
            #expect(created.header("Etag") == "\"\(rev)\"")
            let read = try await client.send(
                port: port, path: "/todo/mp?attachments=true", headers: ["Accept": "multipart/related"])
            let parts = try read.multipartBody().parts
            let json = try parts[0].jsonValue()
            #expect(json["title"] == "mp" && json["_attachments"]?["large.bin"]?["digest"] == .string(digest))
            #expect(json["_attachments"]?["large.bin"]?["content_type"] == "image/png")
            #expect(parts[1].body == Self.large)

            // A replicator pushes a revision with history, parts matched by digest (no filename).
            let (pushHeaders, pushBody) = multipartRelatedRequest(
                ["_id": "pushed", "_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]], "v": 3,
                 "_attachments": ["blob": ["follows": true, "length": 300, "revpos": 2, "digest": .string(digest)]]],
                [(nil, Self.large)])
            let pushed = try await client.send(
                "PUT", port: port, path: "/todo/pushed?new_edits=false", headers: pushHeaders, body: pushBody)
            #expect(pushed.status == 201, "\(pushed.text)")
            #expect(pushed.header("Etag") == nil)
            #expect(try pushed.writtenRevision() == "3-c")
            let again = try await client.send(
                "PUT", port: port, path: "/todo/pushed?new_edits=false", headers: pushHeaders, body: pushBody)
            #expect(again.status == 201)
            let doc = try await client.send(port: port, path: "/todo/pushed?revs=true")
            let pushedJSON = try doc.jsonValue()
            #expect(pushedJSON["_revisions"] == ["start": 3, "ids": ["c", "b", "a"]])
            #expect(pushedJSON["_attachments"]?["blob"]?["revpos"] == 2)
            let bytes = try await client.send(port: port, path: "/todo/pushed/blob")
            #expect([UInt8](bytes.body) == Self.large)
        }
    }

    @Test func badInputsAreRejected() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.adminPort
            func put(_ path: String, _ json: JSONValue) async throws -> Int {
                try await client.send("PUT", port: port, path: path, json: json).status
            }
            #expect(try await put("/todo/a", ["_attachments": ["x": ["data": "@@not base64@@"]]]) == 400)
            #expect(try await put("/todo/a", ["_attachments": ["x": ["stub": true, "revpos": 1]]]) == 400)
            #expect(try await put("/todo/a", ["_attachments": ["x": ["stub": true]]]) == 400)
            #expect(try await put("/todo/a", ["_attachments": ["x": ["follows": true]]]) == 400)
            #expect(try await put("/todo/a?rev=garbage", ["v": 1]) == 400)
            #expect(try await put("/todo/a?new_edits=false", ["_rev": "garbage"]) == 400)
            // Multipart: a missing part, no boundary, another multipart type.
            let (headers, body) = multipartRelatedRequest(["_attachments": ["x": ["follows": true]]], [])
            #expect(try await client.send("PUT", port: port, path: "/todo/a", headers: headers, body: body).status == 400)
            let noBoundary = try await client.send(
                "PUT", port: port, path: "/todo/a", headers: ["Content-Type": "multipart/related"], body: body)
            #expect(noBoundary.status == 400)
            let formData = try await client.send(
                "PUT", port: port, path: "/todo/a",
                headers: ["Content-Type": headers["Content-Type"]!.replacingOccurrences(of: "related", with: "form-data")],
                body: body)
            #expect(formData.status == 415)
            let truncated = try await client.send(
                "PUT", port: port, path: "/todo/a", headers: headers, body: Array(body.dropLast(12)))
            #expect(truncated.status == 400)
            #expect(try await client.send(port: port, path: "/todo/a").status == 404)
        }
    }

    @Test func readsFollowTheCallersChannels() async throws {
        try await GatewayFixture.withRunningGateway(ReadAccessFixture.config()) { client, ports in
            let created = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/secret",
                json: ["channels": "private", "_attachments": ["a": ["data": "aGVsbG8="]]])
            let rev = try created.writtenRevision()
            let port = ports.publicPort
            let alice = ReadAccessFixture.alice
            #expect(try await client.send(port: port, path: "/todo/secret", user: alice).status == 403)
            let redacted = try await client.send(port: port, path: "/todo/secret?rev=\(rev)&attachments=true", user: alice)
            #expect(redacted.status == 200)
            #expect(try redacted.jsonValue() == ["_id": "secret", "_rev": .string(rev), "_removed": true])
            let open = try await client.send(
                port: port, path: "/todo/secret?open_revs=all&attachments=true", headers: ["Accept": "multipart/mixed"],
                user: alice)
            let parts = try open.multipartBody().parts
            #expect(parts.count == 1 && parts[0].headers[.contentType] == "application/json")
            #expect(try parts[0].jsonValue()["_removed"] == true)
            // GUEST reads every channel.
            #expect(try await client.send(port: port, path: "/todo/secret").status == 200)
        }
    }
}
