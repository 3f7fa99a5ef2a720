import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// `_all_docs` pages read from the storage's ID order (callers who see every channel) and the channel index in ID
/// order (users) give exactly what filtering every document would: random documents, deletions and channel moves, random bounds,
/// order, `skip` and `limit`, for the admin, users and a user granted `*`.
@Suite(.timeLimit(.minutes(5))) struct AllDocsPagingTests {
    /// What the model knows of a document.
    private struct Modeled {
        var revision: RevisionID
        var live: Bool
        var channels: Set<String>
    }

    @Test(arguments: StorageBackend.allCases)
    func pagesMatchAModelOfEveryDocument(backend: StorageBackend) async throws {
        let location = try await backend.newLocation()
        let database = try GatewayDatabase(config: DatabaseConfig(name: "db", server: location), startTime: 0)
        defer { database.close() }
        // The writes are synchronous: off Swift's cooperative threads, which a PostgreSQL database would hold.
        var (random, model) = try await offCooperativeThreads {
            var random = SplitMix64(state: 49)
            let channelNames = ["a", "b", "c", "d"]
            func someChannels() -> Set<String> { Set(channelNames.filter { _ in random.next() % 3 == 0 }) }
            let ids = (0..<60).map { "doc-\($0 < 10 ? "0" : "")\($0)" } + ["Zed", "émile", "a"]
            var model: [String: Modeled] = [:]
            for id in ids {
                let channels = someChannels()
                let revision = try database.documents.put(id: id, body: ["channels": .array(channels.sorted().map(JSONValue.string))])
                model[id] = Modeled(revision: revision, live: true, channels: channels)
            }
            // Moves between channels, and deletions.
            for id in ids where random.next() % 3 == 0 {
                guard let current = model[id] else { continue }
                if random.next() % 2 == 0 {
                    let channels = someChannels()
                    let revision = try database.documents.put(
                        id: id, body: ["channels": .array(channels.sorted().map(JSONValue.string))],
                        parentRevision: current.revision.description)
                    model[id] = Modeled(revision: revision, live: true, channels: channels)
                } else {
                    let revision = try database.documents.put(
                        id: id, body: ["_deleted": true], parentRevision: current.revision.description)
                    model[id] = Modeled(revision: revision, live: false, channels: [])
                }
            }
            return (random, model)
        }
        let callers: [Caller] = [
            .admin, .user(User(name: "ann"), channels: ["a"]), .user(User(name: "bob"), channels: ["b", "c"]),
            .user(User(name: "all"), channels: ["*"]), .user(User(name: "none"), channels: []),
            // More channels than PostgreSQL reads one branch each (ChannelIndex.documentPageChannelLimit), fewer
            // than SQLite merges one statement each (documentMergeChannelLimit).
            .user(User(name: "many"), channels: Set(["a", "c"] + (0..<70).map { "empty\($0)" })),
        ]
        let keys: [String?] = [nil, nil, "doc-10", "doc-33", "_", "a", "doc-5", "Zed", "zzz", ""]
        for round in 0..<120 {
            let caller = callers[round % callers.count]
            let options = AllDocsOptions(
                includeDocs: false, channels: false, access: false, revisions: false, conflicts: false,
                attachments: false, updateSequence: false,
                startKey: keys[Int(random.next() % UInt64(keys.count))],
                endKey: keys[Int(random.next() % UInt64(keys.count))],
                // Any non-negative Int is a valid limit: `skip + limit` must not overflow.
                limit: random.next() % 3 == 0 ? nil : random.next() % 5 == 0 ? Int.max : Int(random.next() % 12),
                skip: Int(random.next() % 4),
                key: nil, descending: random.next() % 2 == 0, inclusiveEnd: random.next() % 2 == 0)
            let body = try await AuthorizedDatabase(database: database, caller: caller).allDocs(keys: nil, options: options)

            let visible = model.filter { _, document in
                document.live && caller.canSee(document.channels)
            }.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let range = DocumentIDRange(
                startKey: options.startKey, endKey: options.endKey, inclusiveEnd: options.inclusiveEnd,
                descending: options.descending)
            let inRange = options.descending ? visible.filter(range.contains).reversed() : visible.filter(range.contains)
            let skipped = inRange.dropFirst(options.skip)
            let expected = Array(options.limit.map { skipped.prefix($0) } ?? skipped)

            let rows = body["rows"]?.arrayValue ?? []
            let got = rows.compactMap { $0["id"]?.stringValue }
            #expect(got == expected, "round \(round), \(caller), \(options)")
            // Every live document for a caller who sees every channel (CouchDB); the rows emitted for a user who
            // sees some (the spec, Sync Gateway), which costs no read of the rest of their channels.
            let total = caller.readableChannels == nil ? visible.count : got.count
            #expect(body["total_rows"]?.intValue == Int64(total), "round \(round), \(caller)")
            for row in rows {
                guard let id = row["id"]?.stringValue else { continue }
                #expect(row["value"]?["rev"]?.stringValue == model[id]?.revision.description)
            }
        }
    }

    @Test func rangesCompareIDsAsBytes() {
        let range = DocumentIDRange(startKey: "b", endKey: "d", inclusiveEnd: false)
        #expect(["b", "c", "cz"].allSatisfy(range.contains))
        #expect(!["a", "d", "dz", "é"].contains(where: range.contains))
        let down = DocumentIDRange(startKey: "d", endKey: "b", inclusiveEnd: false, descending: true)
        #expect(["d", "c", "ba"].allSatisfy(down.contains))
        #expect(!["b", "e", "a"].contains(where: down.contains))
        // UTF-8 byte order: "Z" < "a" < "é".
        let upper = DocumentIDRange(startKey: "a")
        #expect(upper.contains("é") && !upper.contains("Z"))
    }
}
