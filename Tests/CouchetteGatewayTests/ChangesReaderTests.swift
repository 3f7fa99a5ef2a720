import CouchetteCore
import Testing

@testable import CouchetteGateway

// MARK: - Reader

extension ChangesTests {
    /// Which entries a caller sees, and their form (gateway-rest-api.md §11.2), without HTTP.
    @Suite("_changes reader", .timeLimit(.minutes(5)))
    struct Reader {
        /// The rows `caller` reads after `since`.
        private func rows(
            _ database: GatewayDatabase, as caller: Caller = .admin, _ options: ChangesOptions = ChangesOptions(),
            after since: UInt64 = 0
        ) async throws -> [ChangesRow] {
            try await ChangesReader(database: database, caller: caller, options: options).read(after: since, limit: nil).rows
        }

        /// The document IDs of rows.
        private func ids(_ rows: [ChangesRow]) -> [String?] {
            rows.map { $0.json["id"]?.stringValue }
        }

        @Test("The admin sees every change, documents in no channel included; a user only their channels")
        func visibility() async throws {
            let database = try ChangesTests.database()
            try database.documents.put(id: "none", body: ["title": "x"])
            try database.documents.put(id: "inA", body: ["channels": ["a"]])
            try database.documents.put(id: "inB", body: ["channels": "b"])

            let admin = try await ChangesReader(database: database, caller: .admin, options: ChangesOptions())
                .read(after: 0, limit: nil)
            #expect(admin.rows.map(\.sequence) == [1, 2, 3])
            #expect(ids(admin.rows) == ["none", "inA", "inB"])
            #expect(admin.isExhausted && admin.position == 3)
            #expect(try await ids(rows(database, as: ChangesTests.user(channels: ["a"]))) == ["inA"])
            #expect(try await rows(database, as: ChangesTests.user(channels: ["*"])).count == 3)
        }

        @Test("bychannel lists are intersected with the user's channels; * means all")
        func byChannel() async throws {
            let database = try ChangesTests.database()
            try database.documents.put(id: "inA", body: ["channels": ["a"]])
            try database.documents.put(id: "inB", body: ["channels": ["b"]])
            try database.documents.put(id: "inC", body: ["channels": ["c"]])
            let both = ChangesOptions(filter: .channels(["a", "b"]))
            let alice = ChangesTests.user(channels: ["a", "c"])
            #expect(ChangesReader.selection(caller: alice, filter: both.filter) == .channels(["a"]))
            #expect(ChangesReader.selection(caller: .admin, filter: both.filter) == .channels(["a", "b"]))
            #expect(ChangesReader.selection(caller: .admin, filter: .channels(["*"])) == .everything)
            #expect(ChangesReader.selection(caller: alice, filter: .channels(["*"])) == .channels(["a", "c"]))
            #expect(try await ids(rows(database, as: alice, both)) == ["inA"])
        }

        @Test("Removals carry removed; active_only drops them and deletions")
        func removals() async throws {
            let database = try ChangesTests.database()
            let first = try database.documents.put(id: "doc", body: ["channels": ["a"]])
            try database.documents.put(id: "doc", body: ["channels": ["b"]], parentRevision: first.description)
            let gone = try database.documents.put(id: "gone", body: ["channels": ["a"]])
            try database.documents.put(id: "gone", body: ["_deleted": true], parentRevision: gone.description)
            try database.documents.put(id: "kept", body: ["channels": ["a"]])

            let alice = ChangesTests.user(channels: ["a"])
            let all = try await rows(database, as: alice)
            #expect(ids(all) == ["doc", "gone", "kept"])
            #expect(all[0].json["removed"] == ["a"])
            #expect(all[0].json["deleted"] == nil)
            #expect(all[1].json["removed"] == ["a"])
            #expect(all[1].json["deleted"] == true)
            #expect(all[2].json["removed"] == nil)

            let activeOnly = ChangesOptions(activeOnly: true)
            #expect(try await ids(rows(database, as: alice, activeOnly)) == ["kept"])
            #expect(try await ids(rows(database, activeOnly)) == ["doc", "kept"])
        }

        @Test("style=all_docs lists the other leaves after the winner")
        func allLeaves() async throws {
            let database = try ChangesTests.database()
            for branch in ["a", "b"] {
                let revisions: JSONValue = ["start": 2, "ids": [.string(branch), "r"]]
                try database.documents.putExisting(
                    id: "doc", body: ["_rev": .string("2-\(branch)"), "_revisions": revisions])
            }
            #expect(try await rows(database)[0].json["changes"] == [["rev": "2-b"]])
            let all = try await rows(database, ChangesOptions(includeAllLeaves: true))
            #expect(all[0].json["changes"] == [["rev": "2-b"], ["rev": "2-a"]])
        }

        @Test("include_docs adds the body as the caller may see it; tombstones as stubs")
        func includeDocs() async throws {
            let database = try ChangesTests.database()
            let first = try database.documents.put(id: "moved", body: ["channels": ["a"], "n": 1])
            let moved = try database.documents.put(
                id: "moved", body: ["channels": ["b"], "n": 2], parentRevision: first.description)
            let gone = try database.documents.put(id: "gone", body: ["channels": ["a"]])
            let tombstone = try database.documents.put(
                id: "gone", body: ["_deleted": true], parentRevision: gone.description)
            try database.documents.put(id: "open", body: ["channels": ["a"], "n": 3])

            let options = ChangesOptions(includeDocs: true)
            let alice = try await rows(database, as: ChangesTests.user(channels: ["a"]), options)
            #expect(alice[0].json["doc"] == ["_id": "moved", "_rev": .string(moved.description), "_removed": true])
            #expect(alice[1].json["doc"] == ["_id": "gone", "_rev": .string(tombstone.description), "_deleted": true])
            #expect(alice[2].json["doc"]?["n"] == 3)
            #expect(alice[2].json["doc"]?["_id"] == "open")
            #expect(try await rows(database, options)[0].json["doc"]?["n"] == 2)
        }

        @Test("_doc_ids reads the named documents in sequence order, after since and up to the limit")
        func documentIDs() async throws {
            let database = try ChangesTests.database()
            for id in ["a", "b", "c", "d"] { try database.documents.put(id: id, body: ["channels": ["x"]]) }
            let options = ChangesOptions(filter: .documentIDs(["d", "b", "a", "zz"]))
            #expect(try await ids(rows(database, options, after: 1)) == ["b", "d"])
            let limited = try await ChangesReader(database: database, caller: .admin, options: options)
                .read(after: 0, limit: 2)
            #expect(limited.rows.map(\.sequence) == [1, 2])
            #expect(try await rows(database, as: ChangesTests.user(channels: ["y"]), options).isEmpty)
        }

        @Test("Reads stop at the limit and continue from their position")
        func limitAndPosition() async throws {
            let database = try ChangesTests.database()
            for index in 0..<5 { try database.documents.put(id: "d\(index)", body: ["i": .int(Int64(index))]) }
            let reader = ChangesReader(database: database, caller: .admin, options: ChangesOptions())
            let first = try await reader.read(after: 0, limit: 2)
            #expect(first.rows.map(\.sequence) == [1, 2] && !first.isExhausted && first.position == 2)
            let rest = try await reader.read(after: first.position, limit: nil)
            #expect(rest.rows.map(\.sequence) == [3, 4, 5] && rest.isExhausted)
        }
    }
}
