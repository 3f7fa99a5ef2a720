import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// Reads that send a current revision's stored body on without parsing it (`_bulk_get`, BLIP `rev`): the spliced
/// text is the read's body, and documents read with their bodies as text read as the same revisions.
@Suite(.timeLimit(.minutes(2))) struct StoredTextReadTests {
    private static let user = Caller.user(User(name: "u"), channels: ["public"])

    /// Random documents: updated, conflicted, deleted, with attachments, an expiry, in or out of the user's channel,
    /// with property names and values that look like special members.
    private func makeStore(_ random: inout SplitMix64) throws -> (DocumentStore, [String]) {
        let store = DocumentStore(storage: try SQLiteGatewayStorage(location: .memory, databaseName: "db"))
        var ids: [String] = []
        for index in 0..<60 {
            let id = "doc\(index)"
            ids.append(id)
            func body() -> JSONValue {
                var members: [String: JSONValue] = [:]
                if Bool.random(using: &random) {
                    members["channels"] = Bool.random(using: &random) ? "public" : "secret"
                }
                let keys = ["title", "a\"b", "é", "n", "nested"].shuffled(using: &random)
                for key in keys.prefix(Int.random(in: 0...4, using: &random)) {
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: members[key] = .string("_attachments")
                    case 1: members[key] = .double(Double(Int.random(in: -99...99, using: &random)) / 8)
                    case 2: members[key] = ["x": [1, "\"_id\"", .null, true]]
                    case 3: members[key] = .string("line\nbreak \\ \u{1}")
                    default: members[key] = .int(Int64(index))
                    }
                }
                if Int.random(in: 0..<6, using: &random) == 0 {
                    members["_attachments"] = ["file": ["content_type": "text/plain", "data": "aGVsbG8="]]
                }
                return .object(members)
            }
            var revision = try store.put(id: id, body: body())
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                var next = body()
                if case .object(var members) = next, Int.random(in: 0..<3, using: &random) == 0,
                    try store.read(id: id, as: .admin)["_attachments"] != nil
                {
                    members["_attachments"] = nil
                    next = .object(members)
                }
                revision = try store.put(id: id, body: next, parentRevision: revision.description)
            }
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                try store.put(id: id, body: ["_deleted": true], parentRevision: revision.description)
            case 1:
                let history: JSONValue = [
                    "start": .int(Int64(revision.generation + 1)), "ids": ["zzz", .string(revision.digest)],
                ]
                let conflicting = JSONValue.string("\(revision.generation + 1)-zzz")
                try store.putExisting(id: id, body: ["_rev": conflicting, "_revisions": history, "c": 1])
                try store.putExisting(
                    id: id, body: ["_rev": "1-aaa", "_revisions": ["start": 1, "ids": ["aaa"]], "_deleted": true])
            case 2:
                try store.storage.update(documentID: id) { document throws(GatewayError) in
                    var document = document
                    document?.expiry = Date(timeIntervalSince1970: 1_800_000_000)
                    return document
                }
            default: break
            }
        }
        return (store, ids)
    }

    private func randomOptions(_ random: inout SplitMix64, known: [RevisionID]) -> ReadOptions {
        var options = ReadOptions(
            includeRevisions: Bool.random(using: &random),
            revisionsLimit: Bool.random(using: &random) ? Int.random(in: 0...3, using: &random) : nil,
            revisionsFrom: Bool.random(using: &random) ? Set(known.shuffled(using: &random).prefix(1)) : nil,
            includeRevisionsInfo: Int.random(in: 0..<4, using: &random) == 0,
            includeAttachments: Bool.random(using: &random),
            includeExpiry: Bool.random(using: &random))
        options.includeConflicts = Bool.random(using: &random)
        options.includeDeletedConflicts = Bool.random(using: &random)
        options.includeLocalSequence = Int.random(in: 0..<4, using: &random) == 0
        return options
    }

    @Test("A spliced read is the read's body; documents read as text read as the same revisions", arguments: 1...4)
    func splicedReadsMatchParsedReads(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let (store, ids) = try makeStore(&random)
        let snapshots = try store.storage.documents(ids: ids, winnerAsText: true)
        #expect(snapshots.values.allSatisfy { $0.winnerText != nil && $0.winner?.body == nil })
        var spliced = 0
        for id in ids {
            let document = try #require(try store.storage.document(id: id))
            let revisions: [RevisionID?] = [nil] + document.tree.leaves.map { $0.id }
            for revision in revisions {
                for caller in [Caller.admin, Self.user] {
                    let options = randomOptions(&random, known: document.tree.history(of: document.winner!.id))
                    let read = Result { () throws(GatewayError) in
                        try store.revision(id: id, revision: revision, as: caller, options: options)
                    }
                    let fromSnapshot = Result { () throws(GatewayError) in
                        try store.revision(id: id, revision: revision, as: caller, options: options, in: snapshots)
                    }
                    #expect(read == fromSnapshot)
                    guard
                        let text = store.revisionText(
                            id: id, revision: revision, as: caller, options: options, in: snapshots)
                    else { continue }
                    spliced += 1
                    #expect(try JSONValue(parsing: text) == read.get().json, "\(id) \(String(describing: revision))")
                }
            }
        }
        #expect(spliced > 40)
    }

    @Test func aPlainCurrentRevisionIsAlwaysSpliced() throws {
        let store = DocumentStore(storage: try SQLiteGatewayStorage(location: .memory, databaseName: "db"))
        let first = try store.put(id: "empty", body: [:])
        let second = try store.put(id: "empty", body: ["v": 1], parentRevision: first.description)
        let snapshots = try store.storage.documents(ids: ["empty", "absent"], winnerAsText: true)
        #expect(snapshots.keys.sorted() == ["empty"])
        let options = ReadOptions(includeRevisions: true)
        let text = try #require(
            store.revisionText(id: "empty", revision: second, as: .admin, options: options, in: snapshots))
        #expect(String(decoding: text, as: UTF8.self).hasPrefix(#"{"_id":"empty","_rev":"2-"#))
        #expect(try JSONValue(parsing: text) == store.read(id: "empty", as: .admin, options: options))
        // An older revision, an absent document, and a caller outside the channels are read the usual way.
        #expect(store.revisionText(id: "empty", revision: first, as: .admin, options: options, in: snapshots) == nil)
        #expect(store.revisionText(id: "absent", revision: nil, as: .admin, options: options, in: snapshots) == nil)
        #expect(store.revisionText(id: "empty", revision: nil, as: Self.user, options: options, in: snapshots) == nil)
    }

    @Test func theTextBelongsToItsRevisionAndIsNeverWritten() async throws {
        let store = DocumentStore(storage: try SQLiteGatewayStorage(location: .memory, databaseName: "db"))
        let first = try store.put(id: "d", body: ["v": 1])
        var document = try #require(try store.storage.documents(ids: ["d"], winnerAsText: true)["d"])
        #expect(document.winnerText?.revision == first)
        // A revision added after the read wins; the text is still the first one's body.
        let second = try document.tree.addLocalEdit(parent: first, body: ["v": 2], deleted: false)
        let parsed = try document.parsingWinnerText()
        #expect(parsed.tree[first]?.body == ["v": 1] && parsed.tree[second]?.body == ["v": 2])
        let sent = store.revisionText(id: "d", revision: nil, as: .admin, options: ReadOptions(), in: ["d": document])
        #expect(sent == nil)
        // Writing a document read as text would store it without its body: the storage stops instead.
        await #expect(processExitsWith: .failure) {
            let storage = try SQLiteGatewayStorage(location: .memory, databaseName: "db")
            try DocumentStore(storage: storage).put(id: "d", body: ["v": 1])
            let read = try storage.documents(ids: ["d"], winnerAsText: true)["d"]
            try storage.update(documentID: "d") { _ throws(GatewayError) in read }
        }
    }

    @Test func attachmentsAreFoundInTheText() {
        func check(_ text: String) -> Bool { DocumentStore.mayHaveAttachments(Array(text.utf8)) }
        #expect(check(#"{"_attachments":{}}"#))
        #expect(check(#"{"a":1,"_attachments":{"f":{"stub":true}}}"#))
        #expect(check(#"{"title":"_attachments"}"#))  // may: read the usual way
        #expect(!check(#"{"title":"\"_attachments\""}"#))
        #expect(!check(#"{"attachments":1}"#))
        #expect(!check(#"{"_attachment":1}"#))
        #expect(!check(#"{}"#))
        #expect(!check(#"""#))
        #expect(!check(#"{"x":"_attachments"#))
    }
}
