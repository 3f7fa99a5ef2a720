import CouchetteBLIP
import CouchetteCore
import Crypto
import Foundation
import Testing

@testable import CouchetteGateway

/// Pushing over BLIP: `proposeChanges` and `rev` (blip-sync-protocol.md §3.5, §3.6).
@Suite(.timeLimit(.minutes(2))) struct BLIPPushTests {
    @Test("proposeChanges answers 0 for new documents and known current revisions, 304 for known revisions, 409 else")
    func proposeChanges() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "mine", ["channels": ["a"]])
            let second = try await ChangesTests.put(client, port: ports.adminPort, "mine", ["channels": ["a"]], rev: first)
            let hidden = try await ChangesTests.put(client, port: ports.adminPort, "bobs", ["channels": ["b"]])
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let proposal: JSONValue = [
                    ["new", "1-0a1b"],  // new document: send it
                    ["mine", "3-0c0d", .string(second)],  // knows the current revision: send it
                    ["mine", .string(second), .string(first)],  // already here: 304
                    ["mine", "3-0e0f", .string(first)],  // knows an older one: conflict
                    ["bobs", "1-0f0f"],  // a current revision alice cannot see: a conflict all the same, its ID untold
                    ["also-new", "1-0a1c"],  // trailing zero, left out
                ]
                let reply = try await connection.send(
                    properties: ["Profile": "proposeChanges", "conflictIncludesRev": "true"], body: proposal.serialized())
                #expect(try JSONValue(parsing: reply.body) == [0, 0, 304, ["status": 409, "rev": .string(second)], 409])
                let plain = try await connection.send(properties: ["Profile": "proposeChanges"], body: proposal.serialized())
                #expect(try JSONValue(parsing: plain.body) == [0, 0, 304, 409, 409])
                // The rev it would have sent is refused the same way.
                let pushed = try await connection.send(
                    properties: ["Profile": "rev", "id": "bobs", "rev": "1-0f0f", "noconflicts": "true"],
                    body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(pushed.error?.code == 409)
                // Local documents do not replicate: a `rev` naming one is refused, and nothing is stored.
                let local = try await connection.send(
                    properties: ["Profile": "rev", "id": "_local/sneaky", "rev": "1-0a0a"],
                    body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(local.error?.code == 400)
            }
            #expect(try await client.send(port: ports.adminPort, path: "/todo/_local/sneaky").status == 404)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/bobs").jsonValue()["_rev"] == .string(hidden))
        }
    }

    @Test("A pushed rev is stored with its history through the sync function; conflicts and refusals are errors")
    func pushedRevisions() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let existing = try await ChangesTests.put(client, port: ports.adminPort, "shared", ["channels": ["a"]])
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let created = try await connection.send(
                    properties: ["Profile": "rev", "id": "fromLite", "rev": "2-0b0b", "history": "1-0a0a", "noconflicts": "true"],
                    body: Array(#"{"channels":["a"],"title":"pushed"}"#.utf8))
                #expect(created.type == .response, "\(created.error.map { "\($0)" } ?? "")")
                let child = try await connection.send(
                    properties: ["Profile": "rev", "id": "shared", "rev": "2-0c0c", "history": existing, "noconflicts": "true"],
                    body: Array(#"{"channels":["a"],"edited":true}"#.utf8))
                #expect(child.type == .response)
                let conflict = try await connection.send(
                    properties: ["Profile": "rev", "id": "shared", "rev": "2-0d0d", "history": existing, "noconflicts": "true"],
                    body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(conflict.error?.code == 409)
                let tombstone = try await connection.send(
                    properties: ["Profile": "rev", "id": "fromLite", "rev": "3-0e0e", "history": "2-0b0b,1-0a0a", "deleted": "1"],
                    body: Array("{}".utf8))
                #expect(tombstone.type == .response)
                let badRevision = try await connection.send(
                    properties: ["Profile": "rev", "id": "bad", "rev": "no-generation"], body: Array("{}".utf8))
                #expect(badRevision.error?.code == 400)
            }
            let stored = try await client.send(port: ports.adminPort, path: "/todo/shared?revs=true")
            #expect(try stored.jsonValue()["_rev"] == "2-0c0c")
            #expect(try stored.jsonValue()["edited"] == true)
            let deleted = try await client.send(port: ports.adminPort, path: "/todo/fromLite?rev=3-0e0e")
            #expect(try deleted.jsonValue()["_deleted"] == true)
            let history = try await client.send(port: ports.adminPort, path: "/todo/fromLite?rev=2-0b0b&revs=true")
            #expect(try history.jsonValue()["_revisions"] == ["start": 2, "ids": ["0b0b", "0a0a"]])
        }
    }

    @Test("A database allowing no conflicts refuses a pushing client's changes (use proposeChanges) and any pushed rev that would make a conflict; REST new_edits=false still stores one")
    func noConflictsDatabase() async throws {
        var config = ChangesTests.usersConfig()
        config.databases["todo"]?.allowConflicts = false
        try await StreamingGateway.run(config) { _, client, ports in
            let existing = try await ChangesTests.put(client, port: ports.adminPort, "shared", ["channels": ["a"]])
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let offered = try await connection.send(
                    properties: ["Profile": "changes"], body: Array(#"[[1,"shared","2-0f0f"]]"#.utf8))
                #expect(offered.error?.code == 409)
                #expect(offered.error?.message == "Use 'proposeChanges' instead")
                // Without noconflicts too, a rev that does not descend from the current one is refused.
                let conflict = try await connection.send(
                    properties: ["Profile": "rev", "id": "shared", "rev": "1-0e0e"], body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(conflict.error?.code == 409)
                let child = try await connection.send(
                    properties: ["Profile": "rev", "id": "shared", "rev": "2-0c0c", "history": existing],
                    body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(child.type == .response)
            }
            var stored = try await client.send(port: ports.adminPort, path: "/todo/shared?conflicts=true").jsonValue()
            #expect(stored["_rev"] == "2-0c0c")
            #expect(stored["_conflicts"] == nil)
            // The REST protocol's new_edits=false writes still store a conflict, as Sync Gateway 3's do.
            let bulk = try await client.send(
                "POST", port: ports.adminPort, path: "/todo/_bulk_docs",
                json: ["new_edits": false, "docs": [["_id": "shared", "_rev": "2-0d0d", "_revisions": ["start": 2, "ids": ["0d0d", .string(String(existing.split(separator: "-")[1]))]]]]])
            #expect(try bulk.jsonValue()[0]?["rev"] == "2-0d0d")
            stored = try await client.send(port: ports.adminPort, path: "/todo/shared?conflicts=true").jsonValue()
            #expect(stored["_conflicts"] == ["2-0c0c"])
        }
    }

    @Test("The sync function decides a pushed revision: 403 with its reason")
    func syncFunctionRefusal() async throws {
        var config = ChangesTests.usersConfig()
        config.databases["todo"]?.sync = #"function(doc) { if (!doc.type) throw({forbidden: "type is required"}); channel(doc.channels); }"#
        try await StreamingGateway.run(config) { _, _, ports in
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let refused = try await connection.send(
                    properties: ["Profile": "rev", "id": "untyped", "rev": "1-0a"], body: Array(#"{"channels":["a"]}"#.utf8))
                #expect(refused.error?.domain == "HTTP")
                #expect(refused.error?.code == 403)
                #expect(refused.error?.message == "type is required")
            }
        }
    }
    @Test("A pushed revision's new attachment is fetched from the client and checked against its digest")
    func pushedAttachments() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let image = Array("pretend this is a PNG".utf8)
            let digest = "sha1-" + Data(Insecure.SHA1.hash(data: image)).base64EncodedString()
            @Sendable func body(digest: String) -> [UInt8] {
                let attachments: JSONValue = [
                    "blob_/photo": [
                        "stub": true, "digest": .string(digest), "length": .int(Int64(image.count)),
                        "content_type": "image/png", "revpos": 1,
                    ]
                ]
                return JSONValue.object(["channels": ["a"], "_attachments": attachments]).serialized()
            }
            // The client answers getAttachment with the image's bytes, whatever digest it is asked for.
            let handler: BLIPConnection.RequestHandler = { request, _ in
                request.profile == "getAttachment" ? request.reply(body: image) : request.errorReply(domain: "BLIP", code: 404)
            }
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: handler) { connection in
                let stored = try await connection.send(
                    properties: ["Profile": "rev", "id": "withImage", "rev": "1-0a"], body: body(digest: digest))
                #expect(stored.type == .response, "\(stored.error.map { "\($0)" } ?? "")")
                let wrong = "sha1-" + Data(Insecure.SHA1.hash(data: Array("other".utf8))).base64EncodedString()
                let mismatch = try await connection.send(
                    properties: ["Profile": "rev", "id": "lying", "rev": "1-0b"], body: body(digest: wrong))
                #expect(mismatch.error?.code == 400)
            }
            let fetched = try await client.send(port: ports.adminPort, path: "/todo/withImage/blob_%2Fphoto")
            #expect(fetched.status == 200)
            #expect(Array(fetched.body) == image)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/lying").status == 404)
        }
    }
    @Test("A pushed stub naming an attachment stored for another document must be proved")
    func provedAttachments() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let secret = Array("bob's private file".utf8)
            let revision = try await ChangesTests.put(client, port: ports.adminPort, "bobs", ["channels": ["b"]])
            let upload = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/bobs/file.txt?rev=\(revision)",
                headers: ["Content-Type": "text/plain"], body: secret)
            #expect(upload.status == 201)
            let digest = "sha1-" + Data(Insecure.SHA1.hash(data: secret)).base64EncodedString()
            let stub: JSONValue = [
                "channels": ["a"],
                "_attachments": ["file.txt": ["stub": true, "digest": .string(digest), "length": .int(Int64(secret.count)), "revpos": 1]],
            ]
            for holdsTheData in [true, false] {
                let handler: BLIPConnection.RequestHandler = { request, _ in
                    guard request.profile == "proveAttachment" else { return request.errorReply(domain: "BLIP", code: 404) }
                    guard holdsTheData else { return request.reply(body: Array("sha1-guessed=".utf8)) }
                    let proof = Insecure.SHA1.hash(data: [UInt8(request.body.count)] + request.body + secret)
                    return request.reply(body: Array(("sha1-" + Data(proof).base64EncodedString()).utf8))
                }
                try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass"), handler: handler) { connection in
                    let reply = try await connection.send(
                        properties: ["Profile": "rev", "id": "claims-\(holdsTheData)", "rev": "1-0a"], body: stub.serialized())
                    #expect(reply.error?.code == (holdsTheData ? nil : 403))
                }
            }
            #expect(try await client.send(port: ports.adminPort, path: "/todo/claims-true/file.txt").status == 200)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/claims-false").status == 404)
        }
    }
    @Test("changes from a 2.x client: 0 for revisions the gateway has, the possible ancestors of the others")
    func changesFromAnOlderClient() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "known", ["channels": ["a"]])
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let offered: JSONValue = [[1, "known", "2-0b"], [2, "known", .string(first)], [3, "brand-new", "1-0c"], [4, "known", .string(first)]]
                let reply = try await connection.send(properties: ["Profile": "changes"], body: offered.serialized())
                #expect(try JSONValue(parsing: reply.body) == [[.string(first)], 0, []])
                let stored = try await connection.send(
                    properties: ["Profile": "rev", "id": "known", "rev": "2-0b", "history": first],
                    body: Array(#"{"channels":["a"],"v":2}"#.utf8))
                #expect(stored.type == .response)
            }
            #expect(try await client.send(port: ports.adminPort, path: "/todo/known").jsonValue()["v"] == 2)
        }
    }

    @Test("The revs a proposeChanges asked for are answered and stored: some sent, a norev for the rest")
    func askedForRevisionsWithANorev() async throws {
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                let proposal: JSONValue = [["p1", "1-0a01"], ["p2", "1-0a02"], ["p3", "1-0a03"]]
                let reply = try await connection.send(
                    properties: ["Profile": "proposeChanges"], body: proposal.serialized())
                #expect(try JSONValue(parsing: reply.body) == [])
                var sent: [UInt64] = []
                for id in ["p1", "p2"] {
                    sent.append(try await connection.queue(
                        properties: ["Profile": "rev", "id": id, "rev": "1-0a0\(id.suffix(1))", "noconflicts": "true"],
                        body: Array(#"{"channels":["a"]}"#.utf8)))
                }
                try await connection.post(properties: ["Profile": "norev", "id": "p3", "rev": "1-0a03", "error": "404"])
                for number in sent { #expect(try await connection.response(to: number).type == .response) }
            }
            for id in ["p1", "p2"] {
                #expect(try await client.send(port: ports.adminPort, path: "/todo/\(id)").status == 200)
            }
            #expect(try await client.send(port: ports.adminPort, path: "/todo/p3").status == 404)
        }
    }
}
