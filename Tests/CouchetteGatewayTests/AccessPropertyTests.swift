import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AccessPropertyTests

/// Random histories of users, roles, admin grants (`*` among them), deletions of users and roles, and writes
/// routed by a sync function that assigns channels and calls `access()` and `role()`: edits, tombstones, and
/// conflicting branches pushed with `new_edits=false`. After every step, for every user, what the gateway shows is
/// compared with ``AccessModel``, an oracle that works out access from the history alone (sync-function.md §6–§8):
///
/// 1. the user's `all_channels`;
/// 2. the documents the user can `GET`, at their winning revisions;
/// 3. the documents a fresh `_changes?since=0` shows live (latest revision, not deleted, not removed);
/// 4. the documents a client pulling incrementally from its saved `last_seq` holds (in pages of a random `limit`,
///    resuming from `N:S` positions): late grants are backfilled;
/// 5. (without HTTP) the documents a client on a continuous feed opened at the start holds.
///
/// A user who loses a channel (or is deleted) keeps what was synced (SG 1.x sends nothing on revocation), so their
/// clients start over from 0 then, as a client purging on access loss would.
@Suite("Access property", .timeLimit(.minutes(10)))
struct AccessPropertyTests {
    static let users = ["u0", "u1", "u2"]
    static let roles = ["r0", "r1"]
    static let channels = ["c0", "c1", "c2", "c3", "!"]
    static let documents = (0..<6).map { "d\($0)" }

    /// `ACCESS_SEED=n` replays one seed; `ACCESS_SEEDS=n` runs n seeds (a longer soak).
    static func seeds(default count: UInt64, from first: UInt64 = 0) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let only = environment["ACCESS_SEED"].flatMap({ UInt64($0) }) { return [only] }
        let count = environment["ACCESS_SEEDS"].flatMap { UInt64($0) } ?? count
        return Array(first..<first + count)
    }

    @Test("Without HTTP, routed by the JavaScript sync function: the gateway agrees with the model after every step")
    func javaScriptSyncFunction() async throws {
        for seed in Self.seeds(default: 30) {
            let database = try DirectAccessHarness.database(javaScript: true)
            defer { database.close() }
            try await Self.check(DirectAccessHarness(database: database), seed: seed, steps: 30, openFeeds: seed % 3 == 0)
        }
    }

    @Test("Without HTTP, routed by its Swift stand-in: the gateway agrees with the model after every step")
    func swiftRouter() async throws {
        for seed in Self.seeds(default: 40, from: 500) {
            let database = try DirectAccessHarness.database(javaScript: false)
            defer { database.close() }
            try await Self.check(DirectAccessHarness(database: database), seed: seed, steps: 30, openFeeds: seed % 3 == 0)
        }
    }

    @Test("Over HTTP, routed by the JavaScript sync function: the gateway agrees with the model after every step")
    func overHTTP() async throws {
        // A twentieth of the seeds the other variants run: 3 by default.
        let environment = ProcessInfo.processInfo.environment
        let seeds =
            environment["ACCESS_SEED"].flatMap { UInt64($0) }.map { [$0] }
            ?? Array(1000..<1000 + max(1, (environment["ACCESS_SEEDS"].flatMap { UInt64($0) } ?? 60) / 20))
        let config = AdminGatewayFixture.config()
        var database = try #require(config.databases["todo"])
        database.sync = AccessSyncFunction.source
        var withSync = config
        withSync.databases["todo"] = database
        // Deleted users' requests fail by design, hundreds of them from one address: login throttling is off here
        // (LoginThrottleTests covers it).
        let registry = try LoginThrottle.$defaultPolicies.withValue((.unlimited, .unlimited)) {
            try LoginThrottle.$defaultFailureDelay.withValue(.zero) {
                try DatabaseRegistry(config: withSync, hasher: PasswordHasher(cost: 4))
            }
        }
        let server = try GatewayServer(config: withSync, registry: registry, logger: GatewayFixture.logger)
        // Generous: ~3,000 requests per seed on a loaded 2-core machine; the suite's time limit bounds it too.
        try await StreamingGateway.run(server, deadline: .seconds(180 * Int64(seeds.count))) { _, client, ports in
            for seed in seeds {
                var harness = HTTPAccessHarness(client: client, ports: ports, database: "todo")
                harness.reset(seed: seed)
                try await Self.check(harness, seed: seed, steps: 25, openFeeds: false)
            }
        }
    }

    // MARK: - The property

    /// Runs `steps` random steps on `harness` and the model, and compares them after each; with `openFeeds`
    /// (without HTTP), also clients on continuous feeds.
    static func check(_ harness: some AccessHarness, seed: UInt64, steps: Int, openFeeds: Bool) async throws {
        var random = SplitMix64(state: seed)
        var model = AccessModel()
        var history = AccessHistory()
        for user in users {
            try await harness.saveUser(user, channels: [], roles: [])
            model.saveUser(user, channels: [], roles: [])
        }
        var incremental = Dictionary(uniqueKeysWithValues: users.map { ($0, AccessReplica()) })
        var open: [String: AccessFeed] = [:]
        let direct = openFeeds ? harness as? DirectAccessHarness : nil
        if let direct {
            for user in users { open[user] = try direct.openFeed(as: user) }
        }
        var channelsBefore: [String: Set<String>?] = Dictionary(
            uniqueKeysWithValues: users.map { ($0, model.channels(of: $0)) })

        for step in 0..<steps {
            let action = try await history.randomStep(on: harness, model: &model, using: &random)
            for user in users {
                // Without HTTP nothing here suspends: a run would hold one of Swift's cooperative threads for a
                // minute, and two of them every other test's tasks and timers (the notifier's deadline tests failed).
                await Task.yield()
                let context = Comment(rawValue: "seed \(seed) step \(step) user \(user) after \(action)")
                let expectedChannels = model.channels(of: user)
                let expected = model.readable(by: user)
                #expect(try await harness.channels(of: user) == expectedChannels, context)
                #expect(try await harness.readable(as: user, ids: documents) == expected, context)

                // Lost access, or deleted: clients purge and start over.
                if let before = channelsBefore[user] ?? nil, let now = expectedChannels, before.isSubset(of: now) {
                    // Kept every channel: clients carry on.
                } else {
                    incremental[user] = AccessReplica()
                    open[user] = nil
                    if expectedChannels != nil, let direct { open[user] = try direct.openFeed(as: user) }
                }
                channelsBefore[user] = expectedChannels
                guard expectedChannels != nil else { continue }

                var fresh = AccessReplica()
                try await fresh.pull(from: harness, as: user, limit: nil)
                #expect(fresh.live == expected, context)

                let limit = [1, 2, 3, nil][Int(random.next() % 4)]
                try await incremental[user]?.pull(from: harness, as: user, limit: limit)
                #expect(incremental[user]?.live == expected, context)

                if var feed = open[user] {
                    try await feed.drain()
                    #expect(feed.replica.live == expected, context)
                    open[user] = feed
                }
            }
        }
    }
}

// MARK: - AccessHistory

/// Makes the random steps: each is done to the harness and recorded in the model.
struct AccessHistory {
    /// Does one random thing to `harness` and `model`, and describes it.
    mutating func randomStep(
        on harness: some AccessHarness, model: inout AccessModel, using random: inout SplitMix64
    ) async throws -> String {
        let users = AccessPropertyTests.users
        let roles = AccessPropertyTests.roles
        let ids = AccessPropertyTests.documents
        let roll = random.next() % 100
        switch roll {
        case 0..<14:
            let user = Self.pick(users, &random)
            let channels = Self.adminChannels(using: &random)
            let roleSet = Self.subset(of: roles, chance: 30, using: &random)
            try await harness.saveUser(user, channels: channels, roles: roleSet)
            model.saveUser(user, channels: channels, roles: roleSet)
            return "admin user \(user) channels \(channels.sorted()) roles \(roleSet.sorted())"
        case 14..<22:
            let role = Self.pick(roles, &random)
            let channels = Self.adminChannels(using: &random)
            try await harness.saveRole(role, channels: channels)
            model.saveRole(role, channels: channels)
            return "role \(role) channels \(channels.sorted())"
        case 22..<25:
            guard let user = Self.pickIfAny(users.filter { model.users[$0] != nil }, &random) else { break }
            try await harness.deleteUser(user)
            model.deleteUser(user)
            return "delete user \(user)"
        case 25..<28:
            guard let role = Self.pickIfAny(roles.filter { model.roles[$0] != nil }, &random) else { break }
            try await harness.deleteRole(role)
            model.deleteRole(role)
            return "delete role \(role)"
        case 28..<40:
            let id = Self.pick(ids, &random)
            guard let winner = model.winner(of: id) else { break }
            // A branch beside the winner: a sibling (a child of its parent), or a second root.
            let parent = model.documents[id]?[winner]?.parent
            let generation = parent.map { AccessModel.split($0).generation + 1 } ?? 1
            let revision = "\(generation)-" + String(format: "%016llx%016llx", random.next(), random.next())
            let deleted = random.next() % 5 == 0
            let body: JSONValue = deleted ? ["_deleted": true] : Self.randomBody(using: &random)
            let ancestry = parent.map { model.history(of: $0, in: id) } ?? []
            try await harness.putExisting(id: id, body: body, history: [revision] + ancestry)
            model.add(revision, of: id, parent: parent, deleted: deleted, body: body)
            return "conflict \(id) \(revision) on \(parent ?? "nothing") \(body.serializedString())"
        case 40..<52:
            let id = Self.pick(ids, &random)
            let live = model.leaves(of: id).filter { model.documents[id]?[$0]?.deleted == false }
            guard !live.isEmpty else { break }
            let leaf = Self.pick(live, &random)
            let revision = try await harness.put(id: id, body: ["_deleted": true], parent: leaf)
            model.add(revision, of: id, parent: leaf, deleted: true, body: ["_deleted": true])
            return "delete \(id) at \(leaf)"
        default:
            break
        }
        // A write: on the winner mostly, sometimes on another leaf.
        let id = Self.pick(ids, &random)
        let leaves = model.leaves(of: id)
        let parent = random.next() % 10 < 7 ? model.winner(of: id) : Self.pickIfAny(leaves, &random)
        let body = Self.randomBody(using: &random)
        let revision = try await harness.put(id: id, body: body, parent: parent)
        model.add(revision, of: id, parent: parent, deleted: false, body: body)
        return "put \(id) on \(parent ?? "nothing") \(body.serializedString())"
    }

    private static func pick<T>(_ items: [T], _ random: inout SplitMix64) -> T {
        items[Int(random.next() % UInt64(items.count))]
    }

    private static func pickIfAny(_ items: [String], _ random: inout SplitMix64) -> String? {
        items.isEmpty ? nil : items[Int(random.next() % UInt64(items.count))]
    }

    /// Admin channels: a random subset of the named channels, and now and then `*`.
    private static func adminChannels(using random: inout SplitMix64) -> Set<String> {
        var channels = subset(of: AccessPropertyTests.channels.dropLast(), chance: 30, using: &random)
        if random.next() % 20 == 0 { channels.insert("*") }
        return channels
    }

    /// A body with random channels, and sometimes `access()` grants (now and then of `*`, which is dropped) and
    /// `role()` grants.
    private static func randomBody(using random: inout SplitMix64) -> JSONValue {
        func sorted(_ names: Set<String>) -> JSONValue { .array(names.sorted().map { .string($0) }) }
        var body: [String: JSONValue] = [
            "channels": sorted(subset(of: AccessPropertyTests.channels, chance: 30, using: &random))
        ]
        if random.next() % 2 == 0 {
            let grantees = AccessPropertyTests.users + AccessPropertyTests.roles.map { "role:\($0)" }
            var channels = subset(of: AccessPropertyTests.channels.dropLast(), chance: 40, using: &random)
            if random.next() % 8 == 0 { channels.insert("*") }
            body["grant"] = [pick(grantees, &random): sorted(channels)]
        }
        if random.next() % 6 == 0 {
            let user = pick(AccessPropertyTests.users, &random)
            body["roles"] = [user: sorted(subset(of: AccessPropertyTests.roles, chance: 50, using: &random))]
        }
        return .object(body)
    }

    private static func subset(
        of items: some Sequence<String>, chance: UInt64, using random: inout SplitMix64
    ) -> Set<String> {
        Set(items.filter { _ in random.next() % 100 < chance })
    }
}
