import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

@Suite(.timeLimit(.minutes(5))) struct DocumentStoreTests {
    private func makeStore() throws -> DocumentStore {
        DocumentStore(storage: try SQLiteGatewayStorage(location: .memory, databaseName: "todo"))
    }

    @Test func createUpdateDeleteFollowTheRevisionRules() throws {
        let store = try makeStore()
        let first = try store.put(id: "list", body: ["type": "task-list", "name": "Groceries", "channels": ["user1"]])
        #expect(first.generation == 1)
        do {
            try store.put(id: "list", body: ["type": "task-list"])
            Issue.record("expected a conflict")
        } catch {
            #expect(error.statusCode == 409 && error.reason == "Document exists")
        }
        let second = try store.put(id: "list", body: ["_rev": .string(first.description), "name": "Shopping"])
        #expect(second.generation == 2)
        do {
            try store.put(id: "list", body: ["_rev": .string(first.description), "name": "Stale"])
            Issue.record("expected a conflict")
        } catch {
            #expect(error.statusCode == 409 && error.reason == "Document revision conflict")
        }
        #expect(throws: GatewayError.self) { try store.put(id: "absent", body: ["_rev": "1-abc"]) }
        let doc = try store.get(id: "list")
        #expect(doc["name"] == "Shopping" && doc["_rev"] == .string(second.description) && doc["_id"] == "list")
        let tombstone = try store.put(id: "list", body: ["_deleted": true], parentRevision: second.description)
        do {
            _ = try store.get(id: "list")
            Issue.record("expected 404")
        } catch {
            #expect(error.statusCode == 404 && error.reason == "deleted")
        }
        #expect(try store.get(id: "list", revision: tombstone.description) == ["_id": "list", "_rev": .string(tombstone.description), "_deleted": true])
        // Recreating continues the tombstone's branch.
        #expect(try store.put(id: "list", body: ["name": "Again"]).generation == 4)
        #expect(try store.get(id: "list", includeRevisions: true)["_revisions"]?["start"] == 4)
    }

    @Test func routesByTheChannelsProperty() throws {
        let store = try makeStore()
        try store.put(id: "a", body: ["channels": ["user1", "moderators"]])
        try store.put(id: "b", body: ["channels": "user2"])
        try store.put(id: "c", body: ["title": "nowhere"])
        #expect(try store.storage.document(id: "a")?.currentChannels == ["user1", "moderators"])
        #expect(try store.storage.changes(inChannels: ["user2"], since: 0, limit: nil).map(\.documentID) == ["b"])
        #expect(try store.storage.document(id: "c")?.currentChannels == [])
    }

    @Test func bulkDocsGivesOneResultPerDocumentInOrder() async throws {
        let store = try makeStore()
        let results = await store.bulkDocs(
            [["type": "task-list", "name": "Groceries"], ["_id": "_bad", "names": "Today"], ["_id": "x", "_secret": 1]],
            newEdits: true)
        #expect(results.count == 3)
        #expect(results[0]["id"]?.stringValue?.count == 32)
        #expect(results[0]["rev"]?.stringValue?.hasPrefix("1-") == true)
        #expect(results[1] == ["id": "_bad", "error": "bad_request", "reason": "Invalid doc ID", "status": 400])
        #expect(results[2]["status"] == 400)
        #expect(results[2]["reason"]?.stringValue?.contains("beginning with '_'") == true)
    }

    @Test func aDocumentTwiceInOneBulkRequestIsCreatedThenConflictsOrUpdates() async throws {
        let store = try makeStore()
        let first = try store.put(id: "list", body: ["type": "task-list", "name": "Groceries"])
        // Both entries are prepared on the same snapshot; the second is redone on the first's result.
        let results = await store.bulkDocs(
            [
                ["_id": "list", "_rev": .string(first.description), "type": "task-list", "name": "Food"],
                ["_id": "list", "_rev": .string(first.description), "type": "task-list", "name": "Drinks"],
                ["_id": "new", "type": "task-list", "name": "A"], ["_id": "new", "type": "task-list", "name": "B"],
            ],
            newEdits: true)
        #expect(results[0]["rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(results[1] == ["id": "list", "error": "conflict", "reason": "Document revision conflict", "status": 409])
        #expect(results[2]["rev"]?.stringValue?.hasPrefix("1-") == true)
        #expect(results[3]["status"] == 409)
        #expect(try store.get(id: "list")["name"] == "Food")
        #expect(try store.get(id: "new")["name"] == "A")
    }

    @Test("noConflicts refuses a revision whose document moved on between its snapshot and its commit")
    func noConflictsHoldsAtCommit() throws {
        for noConflicts in [true, false] {
            let store = try makeStore()
            try store.putExisting(id: "d", body: ["_rev": "1-a", "v": "a"])
            // Computed on the document at 1-a, where 2-c descends from the current revision...
            let pushed = try store.preparePutExisting(
                id: "d", body: ["_rev": "2-c", "_revisions": ["start": 2, "ids": ["c", "a"]], "v": "c"],
                snapshots: ["d": try #require(try store.storage.document(id: "d"))], noConflicts: noConflicts)
            // ...but another client's child of 1-a commits first.
            try store.putExisting(
                id: "d", body: ["_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]], "v": "b"],
                noConflicts: true)
            let leaves = { try store.storage.document(id: "d")?.tree.leaves.map(\.id.description).sorted() }
            if noConflicts {
                #expect(throws: GatewayError.conflict("Document update conflict")) { try store.commit(pushed) }
                #expect(try leaves() == ["2-b"])
            } else {
                // Without the flag the revision goes in beside the other: a conflict, as `new_edits=false` allows.
                try store.commit(pushed)
                #expect(try leaves() == ["2-b", "2-c"])
            }
        }
    }

    @Test("noConflicts: a descendant of the current revision, of a deleted one, or a new document goes in; else 409")
    func noConflictsRules() throws {
        let store = try makeStore()
        try store.putExisting(id: "d", body: ["_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]]], noConflicts: true)
        try store.putExisting(id: "d", body: ["_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]]], noConflicts: true)
        #expect(throws: GatewayError.conflict("Document update conflict")) {
            try store.putExisting(id: "d", body: ["_rev": "3-x", "_revisions": ["start": 3, "ids": ["x", "b", "a"]]], noConflicts: true)
        }
        // Known already: accepted, nothing changes.
        try store.putExisting(id: "d", body: ["_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]]], noConflicts: true)
        try store.putExisting(
            id: "d", body: ["_rev": "4-t", "_revisions": ["start": 4, "ids": ["t", "c", "b", "a"]], "_deleted": true],
            noConflicts: true)
        // After a deletion, a new branch may start.
        try store.putExisting(id: "d", body: ["_rev": "1-n", "v": "again"], noConflicts: true)
        #expect(try store.get(id: "d")["v"] == "again")
    }

    @Test func newEditsFalseInsertsHistoryAndCreatesConflictsSilently() async throws {
        let store = try makeStore()
        try store.putExisting(id: "r", body: ["_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]], "v": "c"])
        try store.putExisting(id: "r", body: ["_rev": "3-d", "_revisions": ["start": 3, "ids": ["d", "b"]], "v": "d"])
        #expect(try store.get(id: "r")["_rev"] == "3-d")
        let all = try store.openRevisions(id: "r", revisions: nil, includeRevisions: true)
        #expect(all.count == 2)
        let some = try store.openRevisions(id: "r", revisions: ["3-c", "9-z", "2-b"], includeRevisions: false)
        #expect(some[0]["ok"]?["v"] == "c")
        #expect(some[1] == ["missing": "9-z"])
        #expect(some[2] == ["missing": "2-b"])
        // Again: accepted, nothing changes.
        let before = try store.storage.lastSequence
        try store.putExisting(id: "r", body: ["_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]]])
        #expect(try store.storage.lastSequence == before)
        // Bad histories. (A `_rev` that disagrees with `_revisions` is ignored, as CouchDB does: not among them.)
        for body: JSONValue in [
            ["_revisions": ["start": 1, "ids": ["b", "a"]]], ["v": 1], ["_rev": "bad"],
        ] {
            #expect(throws: GatewayError.self) { try store.putExisting(id: "r", body: body) }
        }
        let diff = try await store.revsDiff(["r": ["3-c", "4-e", "nonsense"], "new": ["1-a"]])
        #expect(diff["r"]?["missing"] == ["4-e", "nonsense"])
        #expect(diff["r"]?["possible_ancestors"] == ["3-d", "3-c"])
        #expect(diff["new"]?["missing"] == ["1-a"])
    }

    @Test func inlineAttachmentsBecomeStubsStoredByDigest() throws {
        let store = try makeStore()
        let first = try store.put(
            id: "t", body: ["_attachments": ["image": ["content_type": "image/png", "data": "aGVsbG8="]]])
        let stub = try store.get(id: "t")["_attachments"]?["image"]
        #expect(stub?["digest"] == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
        #expect(stub?["stub"] == true && stub?["revpos"] == 1 && stub?["length"] == 5)
        #expect(try store.storage.attachment(digest: "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=") == Array("hello".utf8))
        // A later revision keeps it through a stub.
        try store.put(id: "t", body: ["_rev": .string(first.description), "title": "x", "_attachments": ["image": ["stub": true, "revpos": 1]]])
        #expect(try store.get(id: "t")["_attachments"]?["image"]?["revpos"] == 1)
        #expect(throws: GatewayError.self) {
            try store.put(id: "u", body: ["_attachments": ["x": ["stub": true, "revpos": 1]]])
        }
    }

    @Test func concurrentUpdatesFromOneParentHaveExactlyOneWinner() async throws {
        let store = try makeStore()
        let parent = try store.put(id: "doc", body: ["n": 0]).description
        let outcomes = await withTaskGroup(of: Int.self) { group in
            for index in 0..<10 {
                group.addTask {
                    do {
                        try store.put(id: "doc", body: ["n": .int(Int64(index))], parentRevision: parent)
                        return 201
                    } catch {
                        return (error as? GatewayError)?.statusCode ?? 500
                    }
                }
            }
            var statuses: [Int] = []
            for await status in group { statuses.append(status) }
            return statuses
        }
        #expect(outcomes.filter { $0 == 201 }.count == 1)
        #expect(outcomes.filter { $0 == 409 }.count == 9)
    }

    @Test func rejectsBadIDsBodiesAndRevisions() throws {
        let store = try makeStore()
        for id in ["", "_design", String(repeating: "x", count: 251)] {
            #expect(throws: GatewayError.self) { try store.put(id: id, body: [:]) }
        }
        #expect(throws: GatewayError.self) { try store.put(id: "a", body: ["x", "y"]) }
        #expect(throws: GatewayError.self) { try store.put(id: "a", body: ["_rev": "garbage"]) }
        #expect(throws: GatewayError.self) { try store.get(id: "a", revision: "garbage") }
        #expect(throws: GatewayError.self) { try store.get(id: "missing") }
        #expect(try store.storage.lastSequence == 0)
    }
}

/// The attachment rules of the document store, without HTTP (replication-protocol.md §7.3, §9).
@Suite(.timeLimit(.minutes(5))) struct DocumentStoreAttachmentTests {
    private func makeStore() throws -> DocumentStore {
        DocumentStore(storage: try SQLiteGatewayStorage(location: .memory, databaseName: "todo"))
    }

    private static let hello = Array("hello".utf8)
    private static let world = Array("world".utf8)

    @Test func attachmentsTrueIncludesBodiesAndAttsSinceKeepsOlderOnesAsStubs() throws {
        let store = try makeStore()
        let first = try store.put(id: "d", body: ["_attachments": ["a.txt": ["data": "aGVsbG8="]]])
        let second = try store.put(
            id: "d", body: ["_attachments": ["a.txt": ["stub": true, "revpos": 1], "b.txt": ["data": "d29ybGQ="]]],
            parentRevision: first.description)
        let all = try store.revision(id: "d", as: .admin, options: ReadOptions(includeAttachments: true))
        #expect(all.attachmentBodies == ["a.txt": Self.hello, "b.txt": Self.world])
        #expect(all.body["_attachments"]?["a.txt"]?["stub"] == nil)
        #expect(all.json["_attachments"]?["a.txt"]?["data"] == "aGVsbG8=")
        #expect(all.json["_attachments"]?["b.txt"]?["revpos"] == 2)
        // The reader has the first revision: only b.txt (revpos 2) comes with its body.
        let sinceFirst = try store.revision(
            id: "d", as: .admin, options: ReadOptions(includeAttachments: true, attachmentsSince: [first]))
        #expect(sinceFirst.attachmentBodies.keys.sorted() == ["b.txt"])
        #expect(sinceFirst.json["_attachments"]?["a.txt"]?["stub"] == true)
        let sinceSecond = try store.revision(
            id: "d", as: .admin, options: ReadOptions(includeAttachments: true, attachmentsSince: [second]))
        #expect(sinceSecond.attachmentBodies.isEmpty)
        // Revisions the document does not have change nothing.
        let unknown = try RevisionID(parsing: "1-unknown")
        let sinceUnknown = try store.revision(
            id: "d", as: .admin, options: ReadOptions(includeAttachments: true, attachmentsSince: [unknown]))
        #expect(sinceUnknown.attachmentBodies.count == 2)
        // Without attachments=true everything is a stub.
        #expect(try store.read(id: "d", as: .admin)["_attachments"]?["b.txt"]?["stub"] == true)
    }

    @Test func followingAttachmentsTakeTheirBodiesAndAreChecked() async throws {
        let store = try makeStore()
        let digest = AttachmentDigest.sha1(of: Self.hello).description
        let rev = try store.put(
            id: "f", body: ["_attachments": ["a": ["follows": true, "digest": .string(digest), "length": 5]]],
            attachmentBodies: ["a": Self.hello])
        #expect(try await store.attachment(named: "a", documentID: "f", as: .admin).data == Self.hello)
        #expect(rev.generation == 1)
        let cases: [(JSONValue, [String: [UInt8]], String)] = [
            (["follows": true], [:], "Missing body"),
            (["follows": true, "digest": .string(digest)], ["a": Self.world], "digest"),
            (["follows": true, "length": 4], ["a": Self.hello], "length"),
            (["data": "not base64!"], [:], "base64"),
            (["stub": true, "revpos": 1, "digest": "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA="], [:], "stub"),
        ]
        for (entry, bodies, reason) in cases {
            do {
                try store.put(id: "g", body: ["_attachments": ["a": entry]], attachmentBodies: bodies)
                Issue.record("expected a 400 for \(entry)")
            } catch {
                #expect(error.statusCode == 400)
                #expect(error.reason.contains(reason), "\(error.reason)")
            }
        }
    }

    @Test func gzipEncodedAttachmentsAreStoredDecoded() async throws {
        let store = try makeStore()
        // gzip of "hello", made with Python's gzip.compress(b"hello", mtime=0).
        let gzipped: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00,
            0x86, 0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00,
        ]
        try store.put(
            id: "z", body: ["_attachments": ["a": ["follows": true, "encoding": "gzip", "length": 5]]],
            attachmentBodies: ["a": gzipped])
        let content = try await store.attachment(named: "a", documentID: "z", as: .admin)
        #expect(content.data == Self.hello)
        #expect(content.metadata.encoding == nil && content.metadata.length == 5)
    }

    @Test func putAndDeleteAttachmentWriteRevisionsKeepingTheRest() async throws {
        let store = try makeStore()
        // No document, no revision: an empty document with the attachment is created.
        let first = try store.putAttachment(
            named: "dir/a.txt", documentID: "p", data: Self.hello, contentType: "text/plain", parentRevision: nil)
        #expect(first.generation == 1)
        #expect(throws: GatewayError.conflict("Document exists")) {
            try store.putAttachment(named: "b", documentID: "p", data: Self.world, parentRevision: nil)
        }
        try store.put(id: "p", body: ["title": "T", "_attachments": ["dir/a.txt": ["stub": true, "revpos": 1]]],
            parentRevision: first.description)
        let current = try #require(try store.read(id: "p", as: .admin)["_rev"]?.stringValue)
        let third = try store.putAttachment(
            named: "b", documentID: "p", data: Self.world, contentType: "text/plain", parentRevision: current)
        let body = try store.read(id: "p", as: .admin)
        #expect(body["title"] == "T")
        #expect(body["_attachments"]?["dir/a.txt"]?["revpos"] == 1)
        #expect(body["_attachments"]?["b"]?["revpos"] == 3)
        #expect(body["_attachments"]?["b"]?["content_type"] == "text/plain")
        let content = try await store.attachment(named: "dir/a.txt", documentID: "p", as: .admin)
        #expect(content.data == Self.hello && content.metadata.contentType == "text/plain")
        // Older revisions keep their attachments.
        await #expect(throws: GatewayError.notFound("missing attachment b")) {
            try await store.attachment(named: "b", documentID: "p", revision: first, as: .admin)
        }
        let fourth = try store.deleteAttachment(named: "dir/a.txt", documentID: "p", parentRevision: third.description)
        #expect(try store.read(id: "p", as: .admin)["_attachments"]?.objectValue?.keys.sorted() == ["b"])
        #expect(throws: GatewayError.notFound("missing attachment dir/a.txt")) {
            try store.deleteAttachment(named: "dir/a.txt", documentID: "p", parentRevision: fourth.description)
        }
        #expect(throws: GatewayError.conflict("Document revision conflict")) {
            try store.putAttachment(named: "c", documentID: "p", data: [], parentRevision: third.description)
        }
        // Stored once per digest.
        #expect(try store.storage.attachment(digest: AttachmentDigest.sha1(of: Self.hello).description) == Self.hello)
    }

    @Test func attachmentReadsAndWritesFollowTheDocumentsChannels() async throws {
        let store = try makeStore()
        let rev = try store.put(id: "s", body: ["channels": ["secret"], "_attachments": ["a": ["data": "aGVsbG8="]]])
        let outsider = Caller.user(User(name: "eve"), channels: ["public"])
        let insider = Caller.user(User(name: "bob"), channels: ["secret"])
        await #expect(throws: GatewayError.forbidden("forbidden")) {
            try await store.attachment(named: "a", documentID: "s", as: outsider)
        }
        await #expect(throws: GatewayError.forbidden("forbidden")) {
            try await store.attachment(named: "a", documentID: "s", revision: rev, as: outsider)
        }
        #expect(throws: GatewayError.forbidden("forbidden")) {
            try store.putAttachment(named: "b", documentID: "s", data: [], parentRevision: rev.description, as: outsider)
        }
        #expect(try await store.attachment(named: "a", documentID: "s", as: insider).data == Self.hello)
        // A redacted revision carries no attachment bodies.
        let redacted = try store.revision(
            id: "s", revision: rev, as: outsider, options: ReadOptions(includeAttachments: true))
        #expect(redacted.isRedacted && redacted.attachmentBodies.isEmpty)
    }

    @Test func showExpiryAddsExpAsRFC3339() throws {
        let store = try makeStore()
        try store.put(id: "e", body: ["v": 1])
        #expect(try store.read(id: "e", as: .admin, options: ReadOptions(includeExpiry: true))["_exp"] == nil)
        try store.storage.update(documentID: "e") { document throws(GatewayError) in
            var document = document
            document?.expiry = Date(timeIntervalSince1970: 1_800_000_000)
            return document
        }
        #expect(try store.read(id: "e", as: .admin)["_exp"] == nil)
        #expect(try store.read(id: "e", as: .admin, options: ReadOptions(includeExpiry: true))["_exp"] == "2027-01-15T08:00:00Z")
    }

    @Test func replicatedRevisionsKeepTheirRevposAndStubsResolveOnTheirOwnBranch() async throws {
        let store = try makeStore()
        try store.putExisting(
            id: "r",
            body: ["_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]],
                   "_attachments": ["a": ["data": "aGVsbG8=", "revpos": 2]]])
        #expect(try store.read(id: "r", as: .admin)["_attachments"]?["a"]?["revpos"] == 2)
        // A conflicting branch with another body for "a".
        try store.putExisting(
            id: "r",
            body: ["_rev": "3-d", "_revisions": ["start": 3, "ids": ["d", "b", "a"]],
                   "_attachments": ["a": ["data": "d29ybGQ=", "revpos": 9]]])
        let losing = try #require(try store.openRevisions(id: "r", revisions: nil, as: .admin).first {
            $0["ok"]?["_attachments"]?["a"]?["revpos"] == 2
        }?["ok"]?["_rev"]?.stringValue)
        // Editing the losing branch resolves its stub against that branch, not the winner.
        let next = try store.put(
            id: "r", body: ["_attachments": ["a": ["stub": true, "revpos": 2]]], parentRevision: losing)
        let content = try await store.attachment(named: "a", documentID: "r", revision: next, as: .admin)
        #expect(content.data == Self.hello)
        // An out-of-range incoming revpos becomes the revision's generation.
        #expect(try store.read(id: "r", revision: try RevisionID(parsing: "3-d"), as: .admin)["_attachments"]?["a"]?["revpos"] == 3)
    }
}

/// Records what routing saw.
private final class RecordingRouter: ChannelRouter, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [(document: JSONValue, old: JSONValue?)] = []
    var calls: [(document: JSONValue, old: JSONValue?)] { lock.withLock { seen } }

    func route(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) throws(GatewayError) -> RoutingResult {
        lock.withLock { seen.append((document, oldDocument)) }
        return RoutingResult()
    }
}

@Suite(.timeLimit(.minutes(5))) struct DocumentRoutingTests {
    @Test func routingSeesTheParentRevisionAsTheOldDocument() throws {
        let router = RecordingRouter()
        let store = DocumentStore(
            storage: try SQLiteGatewayStorage(location: .memory, databaseName: "todo"), router: router)
        try store.putExisting(id: "d", body: ["_rev": "2-a", "_revisions": ["start": 2, "ids": ["a", "r"]], "v": "a"])
        try store.putExisting(id: "d", body: ["_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "r"]], "v": "b"])
        // Edit the losing branch: its parent, not the winner, is the old document.
        try store.put(id: "d", body: ["v": "a2"], parentRevision: "2-a")
        #expect(router.calls.last?.old?["v"] == "a")
        #expect(router.calls.last?.document["_id"] == "d")
        try store.put(id: "new", body: ["v": 1])
        #expect(router.calls.last?.old == nil)
        let deleted = try store.put(id: "new", body: ["_deleted": true], parentRevision: try store.get(id: "new")["_rev"]?.stringValue)
        #expect(router.calls.last?.document == ["_id": "new", "_deleted": true, "_rev": .string(deleted.description)])
        #expect(router.calls.last?.old?["v"] == 1)
        // Resurrecting a tombstone: oldDoc is the tombstone (Sync Gateway ≥ 2.7.2, sync-function.md §2).
        try store.put(id: "new", body: ["v": 2], parentRevision: deleted.description)
        #expect(router.calls.last?.old == ["_id": "new", "_deleted": true])
    }
}
