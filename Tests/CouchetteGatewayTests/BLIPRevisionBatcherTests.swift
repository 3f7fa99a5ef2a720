import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

/// The group commit of pushed `rev`s: the revisions a `proposeChanges` reply asked for are written together, and a
/// client that does not send them all is still answered.
@Suite(.timeLimit(.minutes(1))) struct BLIPRevisionBatcherTests {
    /// A new document's first revision as a `rev` handler hands it over.
    static func revision(_ id: String) -> JSONValue {
        ["_id": .string(id), "_rev": "1-0a0b", "_revisions": ["start": 1, "ids": ["0a0b"]], "title": .string(id)]
    }

    /// How the batcher names the revision of `id`.
    static func key(_ id: String) -> String { BLIPRevisionBatcher.key(id, "1-0a0b") }

    static func admin() throws -> AuthorizedDatabase {
        let database = try GatewayDatabase(config: DatabaseConfig(name: "todo"), startTime: 0)
        return AuthorizedDatabase(database: database, caller: .admin)
    }

    /// Stores each ID's revision concurrently, as a connection's `rev` handlers do; the results in ID order.
    static func storeConcurrently(_ ids: [String], in batcher: BLIPRevisionBatcher, as target: AuthorizedDatabase)
        async -> [JSONValue]
    {
        await withTaskGroup(of: (Int, JSONValue).self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask { (index, await batcher.store(revision(id), key: key(id), as: target, noConflicts: true)) }
            }
            var results = [JSONValue](repeating: .null, count: ids.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
    }

    @Test("The revisions a reply asked for are stored in one write, however they trickle in")
    func askedForRevisionsShareOneWrite() async throws {
        let target = try Self.admin()
        // No stall gives up on the batch while the test runs: only its last revision's arrival writes it.
        let batcher = BLIPRevisionBatcher(stallTimeout: .seconds(3_600))
        let ids = (0..<20).map { "doc\($0)" }
        batcher.expect(ids.map(Self.key))
        let results = await Self.storeConcurrently(ids, in: batcher, as: target)
        #expect(results.allSatisfy { $0["error"] == nil }, "\(results)")
        #expect(batcher.writeCount == 1)
        for id in ids { #expect(try target.revision(id: id).body["title"] == .string(id)) }
    }

    @Test("A revision settled without being stored (refused early, a norev) counts as arrived: the rest are written")
    func settledRevisionsCompleteTheirBatch() async throws {
        let target = try Self.admin()
        let batcher = BLIPRevisionBatcher(stallTimeout: .seconds(3_600))
        batcher.expect(["refused", "gone", "only"].map(Self.key))
        batcher.settle(Self.key("refused"))
        batcher.settle(Self.key("gone"))
        let result = await batcher.store(Self.revision("only"), key: Self.key("only"), as: target, noConflicts: true)
        #expect(result["error"] == nil)
        #expect(batcher.writeCount == 1)
    }

    @Test("Revisions of a client that stops sending what it was asked for are written once none arrive for a while")
    func stalledBatchIsWritten() async throws {
        let target = try Self.admin()
        let batcher = BLIPRevisionBatcher(stallTimeout: .milliseconds(20))
        batcher.expect(["a", "b", "c", "d", "e"].map(Self.key))
        let results = await Self.storeConcurrently(["a", "b"], in: batcher, as: target)
        #expect(results.allSatisfy { $0["error"] == nil }, "\(results)")
        #expect(try target.revision(id: "b").body["title"] == "b")
        // The batch is still counted (a slow client sends the rest later): the next revision waits for it or for
        // another stall, then is written.
        let alone = await batcher.store(Self.revision("c"), key: Self.key("c"), as: target, noConflicts: true)
        #expect(alone["error"] == nil)
        #expect(batcher.awaitedBatchCount == 1)
    }

    @Test("A stall writes what is queued but keeps counting the batch: the rest of it is still written together")
    func aStallKeepsTheBatch() async throws {
        let target = try Self.admin()
        let batcher = BLIPRevisionBatcher(stallTimeout: .milliseconds(200))
        let rest = (0..<10).map { "rest\($0)" }
        batcher.expect((["a", "b"] + rest).map(Self.key))
        // Two arrive, then nothing for longer than the stall timeout: they are written.
        _ = await Self.storeConcurrently(["a", "b"], in: batcher, as: target)
        let afterStall = batcher.writeCount
        // The other ten arrive together: one write, not ten.
        let results = await Self.storeConcurrently(rest, in: batcher, as: target)
        #expect(results.allSatisfy { $0["error"] == nil }, "\(results)")
        #expect(batcher.writeCount == afterStall + 1)
        #expect(batcher.awaitedBatchCount == 0)
    }

    @Test("Batches asked for and never sent are forgotten past a bound instead of piling up")
    func awaitedBatchesAreBounded() async throws {
        let batcher = BLIPRevisionBatcher(stallTimeout: .seconds(3_600))
        for batch in 0..<(BLIPRevisionBatcher.maximumAwaitedBatches * 10) {
            batcher.expect((0..<1_000).map { Self.key("\(batch).\($0)") })
        }
        #expect(batcher.awaitedBatchCount == BLIPRevisionBatcher.maximumAwaitedBatches)
    }

    @Test("Without a batch asked for, each revision is written as it comes (a client sending rev without proposing)")
    func unannouncedRevisionsAreWrittenAtOnce() async throws {
        let target = try Self.admin()
        let batcher = BLIPRevisionBatcher(stallTimeout: .seconds(3_600))
        for id in ["x", "y"] {
            #expect(await batcher.store(Self.revision(id), key: Self.key(id), as: target, noConflicts: true)["error"] == nil)
        }
        #expect(batcher.writeCount == 2)
    }

    @Test("A revision that never comes holds back only its own batch: the next one is still written whole")
    func aMissingRevisionHoldsBackOnlyItsBatch() async throws {
        let target = try Self.admin()
        let batcher = BLIPRevisionBatcher(stallTimeout: .seconds(3_600))
        batcher.expect(["a", "missing"].map(Self.key))
        let second = (0..<5).map { "second\($0)" }
        batcher.expect(second.map(Self.key))
        // The first batch never arrives; the second arrives whole and is written without waiting for a stall (counting
        // arrivals against the oldest batch first would have it wait for revisions that are not coming).
        let results = await Self.storeConcurrently(second, in: batcher, as: target)
        #expect(results.allSatisfy { $0["error"] == nil }, "\(results)")
        #expect(batcher.writeCount == 1)
        #expect(batcher.awaitedBatchCount == 1)
    }
}
