import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

/// `POST /{db}/_bulk_get` over real sockets, in its multipart and JSON forms (spec: gateway-rest-api.md §9).
@Suite(.timeLimit(.minutes(5))) struct BulkGetTests {
    static let large = (0..<400).map { UInt8($0 % 253) }

    /// `a` (two revisions, a large attachment added in the second) and `b` (one revision, no attachments).
    private func makeDocuments(_ client: HTTPTestClient, _ port: Int) async throws -> (a1: String, a2: String, b1: String) {
        let a1 = try await client.send("PUT", port: port, path: "/todo/a", json: ["v": 1, "channels": "public"]).writtenRevision()
        let a2 = try await client.send(
            "PUT", port: port, path: "/todo/a?rev=\(a1)",
            json: ["v": 2, "channels": "public",
                   "_attachments": ["big": ["data": .string(Data(Self.large).base64EncodedString())]]]).writtenRevision()
        let b1 = try await client.send("PUT", port: port, path: "/todo/b", json: ["v": "b", "channels": "private"]).writtenRevision()
        return (a1, a2, b1)
    }

    private func bulkGet(
        _ client: HTTPTestClient, _ port: Int, query: String = "", docs: JSONValue, accept: String? = nil,
        user: (String, String)? = nil
    ) async throws -> HTTPTestClient.Reply {
        var headers: [String: String] = [:]
        if let accept { headers["Accept"] = accept }
        return try await client.send(
            "POST", port: port, path: "/todo/_bulk_get\(query)", json: ["docs": docs], headers: headers, user: user)
    }

    @Test func multipartFormWithRevisionsAttachmentsAndErrors() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.adminPort
            let (a1, a2, b1) = try await makeDocuments(client, port)
            let reply = try await bulkGet(
                client, port, query: "?revs=true&attachments=true",
                docs: [
                    ["id": "a", "rev": .string(a2)],
                    ["id": "a", "rev": .string(a2), "atts_since": [.string(a2)]],
                    ["id": "b"],
                    ["id": "a", "rev": "9-missing"],
                    ["id": "", "rev": "1-x"],
                    ["id": "a", "rev": "garbage"],
                    ["id": "nothing"],
                    ["id": "a", "rev": .string(a1), "revs_from": [.string(a1)]],
                ],
                accept: "multipart/related")
            #expect(reply.status == 200)
            let parts = try reply.multipartBody().parts
            #expect(reply.header("Content-Type")?.hasPrefix("multipart/mixed; boundary=") == true)
            #expect(parts.count == 8)

            // 0: attachment bodies included → nested multipart/related.
            #expect(parts[0].contentType?.mediaType == "multipart/related")
            #expect(parts[0].header("X-Doc-ID") == "a" && parts[0].header("X-Rev-ID") == a2)
            let related = try MultipartBody(parsing: parts[0].body, contentType: try #require(parts[0].headers[.contentType]))
            let json0 = try related.parts[0].jsonValue()
            #expect(json0["_revisions"]?["ids"]?.arrayValue?.count == 2)
            #expect(json0["_attachments"]?["big"]?["follows"] == true)
            #expect(related.parts[1].body == Self.large)
            // 1: the reader has a2 → stubs only → JSON.
            #expect(parts[1].headers[.contentType] == "application/json")
            let json1 = try parts[1].jsonValue()
            #expect(json1["_attachments"]?["big"]?["stub"] == true)
            #expect(json1["_revisions"] == ["start": 2, "ids": [.string(String(a2.dropFirst(2)))]])
            // 2: the current revision without rev.
            #expect(try parts[2].jsonValue()["_rev"] == .string(b1))
            #expect(parts[2].header("X-Rev-ID") == b1)
            // 3–6: errors.
            func error(_ index: Int) throws -> JSONValue {
                #expect(parts[index].headers[.contentType] == #"application/json; error="true""#)
                return try parts[index].jsonValue()
            }
            #expect(try error(3) == ["id": "a", "rev": "9-missing", "error": "not_found", "reason": "missing", "status": 404])
            #expect(try error(4) == ["id": "", "rev": "1-x", "error": "bad_request", "reason": "Invalid doc/rev ID in _bulk_get", "status": 400])
            #expect(try error(5)["status"] == 400)
            #expect(try error(6) == ["id": "nothing", "error": "not_found", "reason": "missing", "status": 404])
            // 7: revs_from cuts the history.
            #expect(try parts[7].jsonValue()["_revisions"] == ["start": 1, "ids": [.string(String(a1.dropFirst(2)))]])
        }
    }

    @Test func jsonFormForClientsThatAskForJSON() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.adminPort
            let (_, a2, _) = try await makeDocuments(client, port)
            let reply = try await bulkGet(
                client, port, query: "?attachments=true",
                docs: [["id": "a", "rev": .string(a2)], ["id": "a", "rev": "9-missing"]], accept: "application/json")
            #expect(reply.status == 200 && reply.header("Content-Type") == "application/json")
            let results = try #require(try reply.jsonValue()["results"]?.arrayValue)
            #expect(results.count == 2)
            #expect(results[0]["id"] == "a")
            let ok = results[0]["docs"]?[0]?["ok"]
            #expect(ok?["_rev"] == .string(a2))
            #expect(ok?["_attachments"]?["big"]?["data"] == .string(Data(Self.large).base64EncodedString()))
            #expect(results[1] == ["id": "a", "docs": [["error": ["id": "a", "rev": "9-missing", "error": "not_found", "reason": "missing"]]]])
            // No Accept (or */*): multipart, as Sync Gateway answers.
            let plain = try await bulkGet(client, port, docs: [["id": "a"]])
            #expect(plain.header("Content-Type")?.hasPrefix("multipart/mixed") == true)
            let star = try await bulkGet(client, port, docs: [["id": "a"]], accept: "*/*")
            #expect(star.header("Content-Type")?.hasPrefix("multipart/mixed") == true)
        }
    }

    @Test func badRequestsAndNegotiation() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let port = ports.publicPort
            let missing = try await client.send("POST", port: port, path: "/todo/_bulk_get", json: ["doc": []])
            #expect(missing.status == 400)
            #expect(try missing.jsonValue()["reason"] == "missing 'docs' property")
            #expect(try await client.send("POST", port: port, path: "/todo/_bulk_get", json: ["docs": "x"]).status == 400)
            #expect(try await bulkGet(client, port, docs: [], accept: "text/html").status == 406)
            let empty = try await bulkGet(client, port, docs: [], accept: "multipart/mixed")
            #expect(try empty.status == 200 && empty.multipartBody().parts.isEmpty)
            // The literal route wins over /{db}/{doc}: other methods are 405, not document reads.
            let get = try await client.send(port: port, path: "/todo/_bulk_get")
            #expect(get.status == 405 && get.header("Allow") == "POST")
        }
    }

    @Test func revisionsOutsideTheCallersChannelsAreRedactedOrForbidden() async throws {
        try await GatewayFixture.withRunningGateway(ReadAccessFixture.config()) { client, ports in
            let (_, a2, b1) = try await makeDocuments(client, ports.adminPort)
            let reply = try await bulkGet(
                client, ports.publicPort, query: "?attachments=true",
                docs: [["id": "a", "rev": .string(a2)], ["id": "b", "rev": .string(b1)], ["id": "b"]],
                accept: "multipart/mixed", user: ReadAccessFixture.alice)
            let parts = try reply.multipartBody().parts
            #expect(parts.count == 3)
            #expect(parts[0].contentType?.mediaType == "multipart/related")
            #expect(parts[1].headers[.contentType] == "application/json")
            #expect(try parts[1].jsonValue() == ["_id": "b", "_rev": .string(b1), "_removed": true])
            #expect(try parts[2].jsonValue() == ["id": "b", "error": "forbidden", "reason": "forbidden", "status": 403])
        }
    }
}
