import CouchetteTestSupport
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - BackfillTests

/// Late grants in `_changes` (sync-function.md §8.2–§8.5, the `N:S` scheme of `docs/decisions.md`), without HTTP:
/// feeds read through ``ChangesFeed`` as the handlers do. The HTTP examples are in `BackfillHTTPTests.swift`, the
/// property test in `AccessPropertyTests.swift`; both use the helpers here.
@Suite("_changes backfill", .timeLimit(.minutes(5)))
struct BackfillTests {
    @Test("With many channels the late grants found by visiting the grants are those the per-channel rule finds")
    func manyChannelsLateGrants() {
        var random = SplitMix64(state: 7)
        var sequences: [String: UInt64] = ["!": 1]
        for index in 0..<600 { sequences["c\(index)"] = random.next() % 1_000 + 1 }
        let user = User(name: "u", adminChannels: Set(sequences.keys))
        let access = ChangesAccess(caller: .user(user, channels: Set(sequences.keys)), grantSequences: sequences)
        for _ in 0..<50 {
            let threshold = random.next() % 1_100
            let selected = Set(sequences.keys.filter { _ in random.next() % 4 != 0 })
            let expected = selected.filter { access.grantSequence(of: $0) > threshold }
            #expect(access.channels(grantedAfter: threshold, among: selected) == expected, "threshold \(threshold)")
        }
    }

    // MARK: - Helpers shared by the backfill suites

    /// A Swift stand-in for the JavaScript ``AccessSyncFunction``: channels from `channels` (as the default function),
    /// `access()` grants from `grant` (`{"alice": ["b"], "role:r": ["c"]}`) and `role()` grants from `roles`
    /// (`{"alice": ["r"]}`).
    struct GrantRouter: ChannelRouter {
        func route(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) throws(GatewayError)
            -> RoutingResult
        {
            var result = try PropertyChannelRouter().route(document: document, oldDocument: oldDocument, user: user)
            // As the JavaScript `access()` does, `*` is dropped from granted channels.
            result.access = Self.grants(document["grant"]).mapValues { $0.subtracting(["*"]) }.filter { !$0.value.isEmpty }
            result.roles = Self.grants(document["roles"])
            return result
        }

        private static func grants(_ value: JSONValue?) -> [String: Set<String>] {
            var grants: [String: Set<String>] = [:]
            for (name, targets) in value?.objectValue ?? [:] {
                grants[name] = Set((targets.arrayValue ?? []).compactMap(\.stringValue))
            }
            return grants.filter { !$0.value.isEmpty }
        }
    }

    /// Makes `database` route writes with ``GrantRouter`` (or `router`), sharing its storage and notifier.
    static func install(_ router: any ChannelRouter = GrantRouter(), in database: GatewayDatabase) {
        database.mutable.withLock { state in
            state.documents = DocumentStore(
                storage: database.storage, router: router, revsLimit: state.documents.revsLimit,
                changeNotifier: database.changeNotifier)
        }
    }

    /// An in-memory database routing with ``GrantRouter``, with cheap password hashing.
    static func database() throws -> GatewayDatabase {
        let database = try GatewayDatabase(
            config: DatabaseConfig(name: "todo"), startTime: 0, hasher: PasswordHasher(cost: 4))
        install(in: database)
        return database
    }

    /// A user's caller as the public listener builds it.
    static func caller(_ name: String, in database: GatewayDatabase) throws -> Caller {
        let user = try #require(try database.storage.user(named: name))
        return .user(user, channels: try database.storage.allChannels(of: user))
    }

    /// Creates or replaces user `name` (password `pass`) with admin channels and roles; returns its sequence.
    @discardableResult
    static func saveUser(
        _ name: String, channels: Set<String> = [], roles: Set<String> = [], in database: GatewayDatabase
    ) throws -> UInt64 {
        let password: String? = try database.storage.user(named: name) == nil ? "pass" : nil
        try database.principals.saveUser(
            UserUpdate(name: name, password: password, adminChannels: channels, adminRoles: roles))
        return try #require(try database.storage.user(named: name)).sequence
    }

    /// A normal feed for `name` after `since`: its rows and `last_seq`.
    static func changes(
        _ name: String, since: ChangeSequence = 0, limit: Int? = nil, in database: GatewayDatabase
    ) async throws -> (rows: [ChangesRow], lastSeq: ChangeSequence) {
        let options = ChangesOptions(since: since, limit: limit)
        var feed = ChangesFeed(
            reader: ChangesReader(database: database, caller: try caller(name, in: database), options: options),
            notifier: database.changeNotifier)
        var rows: [ChangesRow] = []
        while let event = try await feed.next() {
            if case .entries(let batch) = event { rows += batch }
        }
        return (rows, feed.lastSequence)
    }

    /// The rows as `id@seq` (the sequence as sent: `N:S` or plain).
    static func summary(_ rows: [ChangesRow]) -> [String] {
        rows.map { "\($0.json["id"]?.stringValue ?? "?")@\($0.sequence)" }
    }

    // MARK: - Starting after a late grant

    @Test("A feed after N re-sends a channel granted after N: its entries up to N as N:S, then later ones plainly")
    func lateAdminGrant() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        let documents = database.documents
        try documents.put(id: "b1", body: ["channels": ["b"]])  // 2
        try documents.put(id: "public", body: ["channels": ["!"]])  // 3
        let synced = try await Self.changes("alice", in: database)
        #expect(Self.summary(synced.rows) == ["public@3"])
        #expect(synced.lastSeq == 3)

        try documents.put(id: "b2", body: ["channels": ["b"]])  // 4
        let grant = try Self.saveUser("alice", channels: ["b"], in: database)  // 5
        #expect(grant == 5)
        let resumed = try await Self.changes("alice", since: synced.lastSeq, in: database)
        // The `_user/` entry at the grant's sequence takes last_seq past it: resuming does not backfill again.
        #expect(Self.summary(resumed.rows) == ["b1@3:2", "b2@4", "_user/alice@5"])
        #expect(resumed.rows[0].json["seq"] == "3:2")
        #expect(resumed.rows[1].json["seq"] == 4)
        #expect(resumed.rows[2].json == ["seq": 5, "id": "_user/alice", "changes": []])
        #expect(resumed.lastSeq == 5)
        // A fresh client sees the same documents; from the current position nothing is owed.
        #expect(Self.summary(try await Self.changes("alice", in: database).rows) == ["b1@2", "public@3", "b2@4"])
        #expect(try await Self.changes("alice", since: 5, in: database).rows.isEmpty)
    }

    @Test("A backfill interrupted by limit resumes from N:S, then continues with the normal feed after N")
    func limitedBackfillResumes() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        for id in ["b1", "b2", "b3"] { try database.documents.put(id: id, body: ["channels": ["b"]]) }  // 2, 3, 4
        try Self.saveUser("alice", channels: ["b"], in: database)  // 5
        try database.documents.put(id: "b4", body: ["channels": ["b"]])  // 6

        let first = try await Self.changes("alice", since: 4, limit: 2, in: database)
        #expect(Self.summary(first.rows) == ["b1@4:2", "b2@4:3"])
        #expect(first.lastSeq == ChangeSequence(3, triggeredBy: 4))
        let second = try await Self.changes("alice", since: first.lastSeq, limit: 2, in: database)
        #expect(Self.summary(second.rows) == ["b3@4:4", "_user/alice@5"])
        let third = try await Self.changes("alice", since: second.lastSeq, in: database)
        #expect(Self.summary(third.rows) == ["b4@6"])
        #expect(third.lastSeq == 6)
    }

    @Test("Grants from the start (configuration users, the public channel) never backfill")
    func grantsFromTheStart() async throws {
        let config = DatabaseConfig(
            name: "todo", users: ["carol": UserConfig(name: "carol", password: "pass", adminChannels: ["c"])])
        let database = try GatewayDatabase(config: config, startTime: 0, hasher: PasswordHasher(cost: 4))
        try database.documents.put(id: "c1", body: ["channels": ["c"]])  // 1
        try database.documents.put(id: "p1", body: ["channels": ["!"]])  // 2
        try database.documents.put(id: "c2", body: ["channels": ["c"]])  // 3
        #expect(Self.summary(try await Self.changes("carol", since: 2, in: database).rows) == ["c2@3"])
    }

    // MARK: - Document grants

    @Test("access() grants backfill from the granting revision's sequence; revoking them stops later changes")
    func documentGrantsAndRevocation() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        let documents = database.documents
        try documents.put(id: "b1", body: ["channels": ["b"]])  // 2
        let grant = try documents.put(id: "grant", body: ["grant": ["alice": ["b"]]])  // 3
        try documents.put(id: "b2", body: ["channels": ["b"]])  // 4
        let resumed = try await Self.changes("alice", since: 2, in: database)
        #expect(Self.summary(resumed.rows) == ["b1@2:2", "_user/alice@3", "b2@4"])
        // Re-asserting the grant keeps its sequence: nothing to backfill after it.
        let same = try documents.put(
            id: "grant", body: ["grant": ["alice": ["b"]], "n": 2], parentRevision: grant.description)  // 5
        #expect(try await Self.changes("alice", since: 4, in: database).rows.isEmpty)

        try documents.put(id: "grant", body: ["n": 3], parentRevision: same.description)  // 6: revoked
        try documents.put(id: "b3", body: ["channels": ["b"]])  // 7
        #expect(try await Self.changes("alice", since: 6, in: database).rows.isEmpty)
        #expect(try await Self.changes("alice", in: database).rows.isEmpty)
    }

    @Test("role() grants backfill the role's channels, at the later of the role grant and the role's channel grant")
    func documentRoleGrants() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        try database.principals.saveRole(RoleUpdate(name: "editors", adminChannels: ["e"]))  // 2
        try database.documents.put(id: "e1", body: ["channels": ["e"]])  // 3
        try database.documents.put(id: "member", body: ["roles": ["alice": ["editors"]]])  // 4
        try database.documents.put(id: "f1", body: ["channels": ["f"]])  // 5
        try database.documents.put(id: "roleGrant", body: ["grant": ["role:editors": ["f"]]])  // 6
        let fromThree = try await Self.changes("alice", since: 3, in: database).rows
        #expect(Self.summary(fromThree) == ["e1@3:3", "f1@5", "_user/alice@6"])
        let fromFive = try await Self.changes("alice", since: 5, in: database).rows
        #expect(Self.summary(fromFive) == ["f1@5:5", "_user/alice@6"])
    }

    @Test("Channels granted to role:NAME before the role exists count from the role's creation")
    func roleCreatedAfterItsGrants() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        try database.documents.put(id: "roleGrant", body: ["grant": ["role:editors": ["e"]]])  // 2
        try database.documents.put(id: "e1", body: ["channels": ["e"]])  // 3
        try database.documents.put(id: "member", body: ["roles": ["alice": ["editors"]]])  // 4
        #expect(try await Self.changes("alice", since: 0, in: database).rows.isEmpty)
        try database.principals.saveRole(RoleUpdate(name: "editors"))  // 5
        let rows = try await Self.changes("alice", since: 4, in: database).rows
        #expect(Self.summary(rows) == ["e1@4:3", "_user/alice@5"])
    }

    @Test("Backfill skips documents that left the channel, and never marks as removed one still readable elsewhere")
    func backfillSkipsRemovals() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", channels: ["a"], in: database)  // 1
        let documents = database.documents
        let moved = try documents.put(id: "moved", body: ["channels": ["b"]])  // 2
        try documents.put(id: "moved", body: ["channels": ["z"]], parentRevision: moved.description)  // 3
        let both = try documents.put(id: "both", body: ["channels": ["a", "b"]])  // 4
        try documents.put(id: "both", body: ["channels": ["a"]], parentRevision: both.description)  // 5
        try documents.put(id: "b1", body: ["channels": ["b"]])  // 6
        try documents.put(id: "grant", body: ["grant": ["alice": ["b"]]])  // 7
        let rows = try await Self.changes("alice", since: 6, in: database).rows
        #expect(Self.summary(rows) == ["b1@6:6", "_user/alice@7"])
    }

    @Test("A user granted * after N gets every older document, those in no channel included")
    func lateWildcard() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", in: database)  // 1
        try database.documents.put(id: "none", body: [:])  // 2
        try database.documents.put(id: "z1", body: ["channels": ["z"]])  // 3
        try Self.saveUser("alice", channels: ["*"], in: database)  // 4
        let rows = try await Self.changes("alice", since: 3, in: database).rows
        #expect(Self.summary(rows) == ["none@3:2", "z1@3:3", "_user/alice@4"])
    }

    // MARK: - Open feeds

    @Test("An open continuous feed backfills a channel granted while it waits, up to its position, then goes on")
    func openFeedSeesGrant() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", channels: ["a"], in: database)  // 1
        try database.documents.put(id: "b1", body: ["channels": ["b"]])  // 2
        try database.documents.put(id: "a1", body: ["channels": ["a"]])  // 3
        var feed = ChangesFeed(
            reader: ChangesReader(
                database: database, caller: try Self.caller("alice", in: database),
                options: ChangesOptions(feed: .continuous, timeout: .seconds(30))),
            notifier: database.changeNotifier)
        guard case .entries(let backlog) = try await feed.next() else {
            Issue.record("expected the backlog")
            return
        }
        #expect(Self.summary(backlog) == ["a1@3"])
        #expect(try await feed.next() == .caughtUp)

        let grant = Task { try database.documents.put(id: "grant", body: ["grant": ["alice": ["b"]]]) }  // 4
        guard case .entries(let backfilled) = try await feed.next() else {
            Issue.record("expected the backfill")
            return
        }
        _ = try await grant.value
        #expect(Self.summary(backfilled) == ["b1@3:2"])
        #expect(feed.lastSequence == ChangeSequence(2, triggeredBy: 3))
        guard case .entries(let userEntry) = try await feed.next() else {
            Issue.record("expected the _user/ entry")
            return
        }
        #expect(Self.summary(userEntry) == ["_user/alice@4"])

        try database.documents.put(id: "b2", body: ["channels": ["b"]])  // 5
        guard case .entries(let later) = try await feed.next() else {
            Issue.record("expected b2")
            return
        }
        #expect(Self.summary(later) == ["b2@5"])
    }

    @Test("An open feed stops sending a revoked channel's changes, and ends once its user is deleted")
    func openFeedRevocationAndDeletion() async throws {
        let database = try Self.database()
        try Self.saveUser("alice", channels: ["a", "b"], in: database)  // 1
        var feed = ChangesFeed(
            reader: ChangesReader(
                database: database, caller: try Self.caller("alice", in: database),
                options: ChangesOptions(feed: .continuous, timeout: .seconds(30))),
            notifier: database.changeNotifier)
        #expect(try await feed.next() == .caughtUp)
        try Self.saveUser("alice", channels: ["a"], in: database)  // 2
        try database.documents.put(id: "b1", body: ["channels": ["b"]])  // 3
        try database.documents.put(id: "a1", body: ["channels": ["a"]])  // 4
        guard case .entries(let rows) = try await feed.next() else {
            Issue.record("expected a1")
            return
        }
        #expect(Self.summary(rows) == ["a1@4"])
        // Deleting a user takes no sequence and wakes no feed: the next change does.
        try database.principals.deleteUser(named: "alice")
        try database.documents.put(id: "a2", body: ["channels": ["a"]])
        #expect(try await feed.next() == nil)
    }
}
