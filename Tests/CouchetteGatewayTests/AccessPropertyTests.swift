import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AccessPropertyTests

/// Random histories of users, roles, admin grants, document grants (``BackfillTests/GrantRouter``), writes, moves,
/// deletions and revocations; after every step, for every user (sync-function.md §7–§8):
///
/// 1. the documents a full `_changes?since=0` shows live (latest revision, not deleted, not removed) are exactly the
///    documents the user can `GET`, at the same revisions;
/// 2. a client that pulls incrementally from its saved `last_seq` (in pages of a random `limit`, resuming from `N:S`
///    positions) holds exactly those documents too: late grants are backfilled;
/// 3. (without HTTP) so does a client on a continuous feed opened at the start, which sees grants as they land.
///
/// A user who loses a channel keeps what was synced (SG 1.x sends nothing on revocation), so their clients start
/// over from 0 then, as a client purging on access loss would.
@Suite("Access property")
struct AccessPropertyTests {
    static let users = ["u0", "u1", "u2"]
    static let roles = ["r0", "r1"]
    static let channels = ["c0", "c1", "c2", "c3", "!"]
    static let documents = (0..<8).map { "d\($0)" }

    @Test("Without HTTP: fresh feeds, GET, incremental pulls and open feeds agree after every step")
    func direct() async throws {
        // ACCESS_SEED=n replays one seed; ACCESS_SEEDS=n runs n seeds (a longer soak).
        let environment = ProcessInfo.processInfo.environment
        let only = environment["ACCESS_SEED"].flatMap { UInt64($0) }
        let count = environment["ACCESS_SEEDS"].flatMap { UInt64($0) } ?? 60
        for seed in 0..<max(count, (only ?? 0) + 1) where only == nil || only == seed {
            let database = try BackfillTests.database()
            defer { database.close() }
            let harness = DirectHarness(database: database)
            try await Self.check(harness, seed: seed, steps: 30, openFeeds: seed % 3 == 0)
        }
    }

    @Test("Over HTTP: fresh feeds, GET and incremental pulls agree after every step")
    func overHTTP() async throws {
        let count = ProcessInfo.processInfo.environment["ACCESS_SEEDS"].flatMap { UInt64($0) }.map { $0 / 20 } ?? 3
        try await BackfillTests.HTTP.run(deadline: .seconds(30 + 2 * Int64(count))) { client, ports, _ in
            for seed in 1000..<1000 + max(count, 1) {
                var harness = HTTPHarness(client: client, ports: ports, database: "todo")
                harness.reset(seed: seed)
                try await Self.check(harness, seed: seed, steps: 25, openFeeds: false)
            }
        }
    }

    // MARK: - The property

    /// Runs `steps` random steps on `harness` and checks the property after each; with `openFeeds` (without HTTP),
    /// also clients on continuous feeds.
    static func check(_ harness: some AccessHarness, seed: UInt64, steps: Int, openFeeds: Bool) async throws {
        var random = SplitMix64(state: seed)
        var model = ModelDatabase()
        for user in users { try await harness.saveUser(user, channels: [], roles: []) }
        var incremental = Dictionary(uniqueKeysWithValues: users.map { ($0, Replica()) })
        var open: [String: OpenFeed] = [:]
        if openFeeds, let direct = harness as? DirectHarness {
            for user in users { open[user] = try direct.openFeed(as: user) }
        }
        var channelsBefore: [String: Set<String>] = [:]
        for user in users { channelsBefore[user] = try await harness.channels(of: user) }

        for step in 0..<steps {
            let action = try await model.randomStep(on: harness, using: &random)
            for user in users {
                let context = Comment(rawValue: "seed \(seed) step \(step) user \(user) after \(action)")
                let now = try await harness.channels(of: user)
                if !(channelsBefore[user] ?? []).isSubset(of: now) {
                    incremental[user] = Replica()
                    if openFeeds, let direct = harness as? DirectHarness { open[user] = try direct.openFeed(as: user) }
                }
                channelsBefore[user] = now

                let readable = try await harness.readable(as: user, ids: documents)
                var fresh = Replica()
                try await fresh.pull(from: harness, as: user, limit: nil)
                #expect(fresh.live == readable, context)

                let limit = [1, 2, 3, nil][Int(random.next() % 4)]
                try await incremental[user]?.pull(from: harness, as: user, limit: limit)
                #expect(incremental[user]?.live == readable, context)

                if var feed = open[user] {
                    try await feed.drain()
                    #expect(feed.replica.live == readable, context)
                    open[user] = feed
                }
            }
        }
    }
}

extension AccessPropertyTests {
    // MARK: - Random steps

    /// What the test knows of the documents: their current revisions (tombstones included).
    struct ModelDatabase {
        var revisions: [String: String] = [:]
        var deleted: Set<String> = []

        /// Does one random thing to `harness` and describes it.
        mutating func randomStep(on harness: some AccessHarness, using random: inout SplitMix64) async throws
            -> String
        {
            let users = AccessPropertyTests.users
            let roles = AccessPropertyTests.roles
            let roll = random.next() % 100
            switch roll {
            case 0..<18:
                let user = users[Int(random.next() % UInt64(users.count))]
                let channels = Self.subset(of: AccessPropertyTests.channels.dropLast(), chance: 30, using: &random)
                let roleSet = Self.subset(of: roles, chance: 30, using: &random)
                try await harness.saveUser(user, channels: channels, roles: roleSet)
                return "admin user \(user) channels \(channels.sorted()) roles \(roleSet.sorted())"
            case 18..<28:
                let role = roles[Int(random.next() % UInt64(roles.count))]
                let channels = Self.subset(of: AccessPropertyTests.channels.dropLast(), chance: 35, using: &random)
                try await harness.saveRole(role, channels: channels)
                return "role \(role) channels \(channels.sorted())"
            default:
                let ids = AccessPropertyTests.documents
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let parent = revisions[id]
                if roll >= 85, parent != nil, !deleted.contains(id) {
                    revisions[id] = try await harness.put(id: id, body: ["_deleted": true], parent: parent)
                    deleted.insert(id)
                    return "delete \(id)"
                }
                let body = Self.randomBody(using: &random)
                revisions[id] = try await harness.put(id: id, body: body, parent: parent)
                deleted.remove(id)
                return "put \(id) \(body.serializedString())"
            }
        }

        /// A body with random channels, and sometimes `access()` and `role()` grants.
        private static func randomBody(using random: inout SplitMix64) -> JSONValue {
            var body: [String: JSONValue] = [
                "channels": .array(subset(of: AccessPropertyTests.channels, chance: 30, using: &random).sorted().map {
                    .string($0)
                })
            ]
            if random.next() % 4 == 0 {
                var grant: [String: JSONValue] = [:]
                let grantees = AccessPropertyTests.users + AccessPropertyTests.roles.map { "role:\($0)" }
                let grantee = grantees[Int(random.next() % UInt64(grantees.count))]
                grant[grantee] = .array(
                    subset(of: AccessPropertyTests.channels.dropLast(), chance: 40, using: &random).sorted().map {
                        .string($0)
                    })
                body["grant"] = .object(grant)
            }
            if random.next() % 6 == 0 {
                let users = AccessPropertyTests.users
                let user = users[Int(random.next() % UInt64(users.count))]
                body["roles"] = [
                    user: .array(subset(of: AccessPropertyTests.roles, chance: 50, using: &random).sorted().map {
                        .string($0)
                    })
                ]
            }
            return .object(body)
        }

        private static func subset(
            of items: some Sequence<String>, chance: UInt64, using random: inout SplitMix64
        ) -> Set<String> {
            Set(items.filter { _ in random.next() % 100 < chance })
        }
    }

    // MARK: - Clients

    /// A client's copy: each live document's revision, and where to resume.
    struct Replica {
        var live: [String: String] = [:]
        var lastSeq = "0"

        /// Applies entries in order: a deleted or removed entry drops the document, any other sets its revision.
        mutating func apply(_ rows: [JSONValue]) {
            for row in rows {
                // Clients ignore `_user/` entries.
                guard let id = row["id"]?.stringValue, !id.hasPrefix("_user/") else { continue }
                let removed = !(row["removed"]?.arrayValue ?? []).isEmpty
                if row["deleted"] == true || removed {
                    live[id] = nil
                } else {
                    live[id] = row["changes"]?.arrayValue?.first?["rev"]?.stringValue
                }
            }
        }

        /// Pulls normal feeds from ``lastSeq`` in pages of `limit` until one comes back short.
        mutating func pull(from harness: some AccessHarness, as user: String, limit: Int?) async throws {
            while true {
                let page = try await harness.changes(as: user, since: lastSeq, limit: limit)
                apply(page.rows)
                lastSeq = page.lastSeq
                guard let limit, page.sent >= limit else { return }
            }
        }
    }

    /// A continuous feed kept open across steps, with the replica it feeds.
    struct OpenFeed {
        var feed: ChangesFeed
        var replica = Replica()

        /// Applies entries until the feed has nothing more (its 1 ms heartbeat).
        mutating func drain() async throws {
            while let event = try await feed.next() {
                switch event {
                case .entries(let rows): replica.apply(rows.map(\.json))
                case .caughtUp: continue
                case .heartbeat: return
                }
            }
            Issue.record("the open feed ended")
        }
    }

    // MARK: - Harnesses

    /// One normal feed's response.
    struct Page: Sendable {
        /// The entries the test looks at.
        var rows: [JSONValue]
        /// How many entries were sent (for paging with `limit`).
        var sent: Int
        /// `last_seq`.
        var lastSeq: String
    }

    /// The operations the property needs, without HTTP or over it.
    protocol AccessHarness: Sendable {
        func saveUser(_ name: String, channels: Set<String>, roles: Set<String>) async throws
        func saveRole(_ name: String, channels: Set<String>) async throws
        /// Writes a revision (a child of `parent`) and returns it.
        func put(id: String, body: JSONValue, parent: String?) async throws -> String
        /// The channels `user` can read now.
        func channels(of user: String) async throws -> Set<String>
        /// The documents among `ids` that `user` can `GET`, with their revisions.
        func readable(as user: String, ids: [String]) async throws -> [String: String]
        /// A normal `_changes` feed of `user`: its entries (some perhaps left out), how many were sent, `last_seq`.
        func changes(as user: String, since: String, limit: Int?) async throws -> Page
    }

    /// The property through ``DocumentStore`` and ``ChangesFeed`` directly.
    struct DirectHarness: AccessHarness {
        let database: GatewayDatabase

        func saveUser(_ name: String, channels: Set<String>, roles: Set<String>) throws {
            try BackfillTests.saveUser(name, channels: channels, roles: roles, in: database)
        }

        func saveRole(_ name: String, channels: Set<String>) throws {
            try database.principals.saveRole(RoleUpdate(name: name, adminChannels: channels))
        }

        func put(id: String, body: JSONValue, parent: String?) throws -> String {
            try database.documents.put(id: id, body: body, parentRevision: parent).description
        }

        func channels(of user: String) throws -> Set<String> {
            try #require(try BackfillTests.caller(user, in: database).readableChannels)
        }

        func readable(as user: String, ids: [String]) throws -> [String: String] {
            let caller = try BackfillTests.caller(user, in: database)
            var readable: [String: String] = [:]
            for id in ids {
                guard let body = try? database.documents.read(id: id, as: caller) else { continue }
                readable[id] = body["_rev"]?.stringValue
            }
            return readable
        }

        func changes(as user: String, since: String, limit: Int?) async throws -> Page {
            let page = try await BackfillTests.changes(
                user, since: try ChangeSequence.parse(since), limit: limit, in: database)
            return Page(rows: page.rows.map(\.json), sent: page.rows.count, lastSeq: page.lastSeq.description)
        }

        /// A continuous feed of `user` from 0 with a 1 ms heartbeat, for ``OpenFeed/drain()``.
        func openFeed(as user: String) throws -> OpenFeed {
            let options = ChangesOptions(feed: .continuous, heartbeat: .milliseconds(1))
            let caller = try BackfillTests.caller(user, in: database)
            let reader = ChangesReader(database: database, caller: caller, options: options)
            return OpenFeed(feed: ChangesFeed(reader: reader, notifier: database.changeNotifier))
        }
    }

    /// The property over HTTP: writes and grants on the admin port, reads as the user (Basic auth) on the public port.
    /// Each run uses its own user, role and document names (``reset(seed:)``), so runs share one server.
    struct HTTPHarness: AccessHarness {
        let client: HTTPTestClient
        let ports: BoundPorts
        let database: String
        private var prefix = ""

        init(client: HTTPTestClient, ports: BoundPorts, database: String) {
            self.client = client
            self.ports = ports
            self.database = database
        }

        /// Names this run's principals and documents after `seed`.
        mutating func reset(seed: UInt64) {
            prefix = "s\(seed)_"
        }

        private func name(_ base: String) -> String { prefix + base }

        /// Renames a body's grantees, role names and (non-public) channels to this run's.
        private func renamed(_ body: JSONValue) -> JSONValue {
            guard var members = body.objectValue else { return body }
            func names(_ value: JSONValue?) -> JSONValue? {
                value?.arrayValue.map { .array($0.compactMap(\.stringValue).map { .string(channel($0)) }) }
            }
            if let channels = names(members["channels"]) { members["channels"] = channels }
            for key in ["grant", "roles"] {
                guard let grants = members[key]?.objectValue else { continue }
                var renamed: [String: JSONValue] = [:]
                for (grantee, targets) in grants {
                    let principal =
                        grantee.hasPrefix("role:") ? "role:" + name(String(grantee.dropFirst(5))) : name(grantee)
                    renamed[principal] = key == "roles"
                        ? .array((targets.arrayValue ?? []).compactMap(\.stringValue).map { .string(name($0)) })
                        : names(targets)
                }
                members[key] = .object(renamed)
            }
            return .object(members)
        }

        private func channel(_ base: String) -> String { base == "!" ? base : name(base) }

        private func send(_ method: String, _ path: String, json: JSONValue) async throws -> HTTPTestClient.Reply {
            let reply = try await client.send(method, port: ports.adminPort, path: "/\(database)/\(path)", json: json)
            try #require((200..<300).contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text)")
            return reply
        }

        func saveUser(_ user: String, channels: Set<String>, roles: Set<String>) async throws {
            _ = try await send(
                "PUT", "_user/\(name(user))",
                json: [
                    "password": "pass", "admin_channels": .array(channels.sorted().map { .string(channel($0)) }),
                    "admin_roles": .array(roles.sorted().map { .string(name($0)) }),
                ])
        }

        func saveRole(_ role: String, channels: Set<String>) async throws {
            let channels = channels.sorted().map { JSONValue.string(channel($0)) }
            _ = try await send("PUT", "_role/\(name(role))", json: ["admin_channels": .array(channels)])
        }

        func put(id: String, body: JSONValue, parent: String?) async throws -> String {
            let path = name(id) + (parent.map { "?rev=\($0)" } ?? "")
            let reply: HTTPTestClient.Reply
            if body["_deleted"] == true {
                reply = try await client.send("DELETE", port: ports.adminPort, path: "/\(database)/\(path)")
                try #require(reply.status == 200, "DELETE \(path): \(reply.status) \(reply.text)")
            } else {
                reply = try await send("PUT", path, json: renamed(body))
            }
            return try #require(try reply.jsonValue()["rev"]?.stringValue)
        }

        func channels(of user: String) async throws -> Set<String> {
            let reply = try await client.send(port: ports.adminPort, path: "/\(database)/_user/\(name(user))")
            let all = try reply.jsonValue()["all_channels"]?.arrayValue ?? []
            return Set(all.compactMap(\.stringValue))
        }

        func readable(as user: String, ids: [String]) async throws -> [String: String] {
            var readable: [String: String] = [:]
            for id in ids {
                let reply = try await client.send(
                    port: ports.publicPort, path: "/\(database)/\(name(id))", user: (name(user), "pass"))
                guard reply.status == 200 else { continue }
                readable[id] = try reply.jsonValue()["_rev"]?.stringValue
            }
            return readable
        }

        func changes(as user: String, since: String, limit: Int?) async throws -> Page {
            let query = "since=\(since)" + (limit.map { "&limit=\($0)" } ?? "")
            let reply = try await client.send(
                port: ports.publicPort, path: "/\(database)/_changes?\(query)", user: (name(user), "pass"))
            try #require(reply.status == 200, "_changes: \(reply.status) \(reply.text)")
            let parsed = try ChangesTests.results(reply.text)
            // Earlier runs' public documents are visible too: keep this run's, under their base names.
            let rows = parsed.results.compactMap { row -> JSONValue? in
                guard var members = row.objectValue, let id = members["id"]?.stringValue, id.hasPrefix(prefix) else {
                    return nil
                }
                members["id"] = .string(String(id.dropFirst(prefix.count)))
                return .object(members)
            }
            return Page(rows: rows, sent: parsed.results.count, lastSeq: try #require(parsed.lastSeq))
        }
    }
}
