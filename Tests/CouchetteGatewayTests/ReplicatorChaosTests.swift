import CouchetteTestSupport
import Couchette
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorChaosTests

/// Replication through a proxy that cuts connections at random: retries from the checkpoints must end with both
/// databases holding the same documents and revision trees — nothing lost, nothing doubled. The two protocols run
/// one after the other: together they would hold both cores for a minute and starve the rest of `make test`.
@Suite("Replicator under a flaky network", .serialized, .timeLimit(.minutes(5)))
struct ReplicatorChaosTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    /// Documents replicated (`COUCHETTE_CHAOS_DOCUMENTS` changes it).
    static let count = ProcessInfo.processInfo.environment["COUCHETTE_CHAOS_DOCUMENTS"].flatMap(Int.init) ?? 10_000

    /// One-shot push and pull as GUEST through `port`, retrying every cut at once.
    static func sync(_ database: LiteDatabase, port: UInt16, over transport: ReplicationProtocol) async throws {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: transport.url(port: port)))
        config.addCollection(try database.lists)
        config.maxAttempts = 10_000
        config.maxAttemptWaitTime = 0.001
        try await Replicator(config: config).run()
    }

    /// Every document's leaf revisions, winner first.
    static func trees(_ database: LiteDatabase) throws -> [String: [String]] {
        var trees: [String: [String]] = [:]
        for change in try database.lists.changes(since: 0) {
            trees[change.documentID] = try database.lists.leafRevisions(documentID: change.documentID).compactMap(\.revisionID)
        }
        return trees
    }

    @Test(
        "Connections cut at random while documents replicate both ways: identical documents and trees",
        arguments: ReplicationProtocol.allCases)
    func cutConnectionsLoseAndDoubleNothing(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(AdminGatewayFixture.config(guest: true)) { _, ports, _ in
            let proxy = try ChaosProxy(targetPort: ports.publicPort, cutProbability: 0.01)
            defer { proxy.stop() }
            let seed = Comment(rawValue: "chaos seed \(proxy.seed) (COUCHETTE_CHAOS_SEED=\(proxy.seed) replays it)")
            do {
                try await Self.replicateBothWays(through: proxy, over: transport, seed: seed)
            } catch {
                Issue.record(error, seed)
            }
        }
    }

    /// The body of ``cutConnectionsLoseAndDoubleNothing()``: every check names the proxy's seed.
    static func replicateBothWays(through proxy: ChaosProxy, over transport: ReplicationProtocol, seed: Comment) async throws {
        let phone = try LiteDatabase("phone")
        let tablet = try LiteDatabase("tablet")
        let half = Self.count / 2
        try phone.database.inBatch {
            for index in 0..<half { _ = try phone.lists.putProperties(["n": index], documentID: "phone-\(index)") }
            _ = try phone.lists.putProperties(["title": "shared"], documentID: "shared")
        }
        try tablet.database.inBatch {
            for index in 0..<(Self.count - half) {
                _ = try tablet.lists.putProperties(["n": index], documentID: "tablet-\(index)")
            }
        }
        try await Self.sync(phone, port: proxy.port, over: transport)
        try await Self.sync(tablet, port: proxy.port, over: transport)
        // Second revisions on the phone, and the shared document edited on both sides: a conflict.
        try phone.database.inBatch {
            for index in stride(from: 0, to: half, by: 10) {
                let current = try #require(try phone.lists.currentRevision(documentID: "phone-\(index)"))
                _ = try current.createRevision(properties: ["n": index, "edited": true])
            }
        }
        for database in [phone, tablet] {
            let current = try #require(try database.lists.currentRevision(documentID: "shared"))
            _ = try current.createRevision(properties: ["title": "edited on \(database.database.name)"])
        }
        for database in [phone, tablet, phone] { try await Self.sync(database, port: proxy.port, over: transport) }

        let phoneTrees = try Self.trees(phone)
        #expect(phoneTrees.count == Self.count + 1, seed)
        let tabletTrees = try Self.trees(tablet)
        let differing = Set(phoneTrees.keys).union(tabletTrees.keys).filter { phoneTrees[$0] != tabletTrees[$0] }.sorted()
        #expect(
            differing.isEmpty,
            "differ: \(differing.prefix(5).map { "\($0) phone \(phoneTrees[$0] ?? []) tablet \(tabletTrees[$0] ?? [])" }); \(seed)")
        #expect(phoneTrees["shared"]?.count == 2, seed)
        #expect(proxy.cuts >= 5, "only \(proxy.cuts) connections were cut; \(seed)")
    }
}
