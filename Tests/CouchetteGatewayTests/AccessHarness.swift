import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AccessHarness

/// The operations the access property needs, without HTTP (``DirectAccessHarness``) or over it
/// (``HTTPAccessHarness``).
protocol AccessHarness: Sendable {
    func saveUser(_ name: String, channels: Set<String>, roles: Set<String>) async throws
    func deleteUser(_ name: String) async throws
    func saveRole(_ name: String, channels: Set<String>) async throws
    func deleteRole(_ name: String) async throws
    /// Writes a revision (a child of `parent`; a tombstone when `body` has `_deleted`) and returns its ID.
    func put(id: String, body: JSONValue, parent: String?) async throws -> String
    /// Inserts a revision made elsewhere (`new_edits=false`) with its history, newest first.
    func putExisting(id: String, body: JSONValue, history: [String]) async throws
    /// The channels `user` can read now (`all_channels`); nil when the user does not exist.
    func channels(of user: String) async throws -> Set<String>?
    /// The documents among `ids` that `user` can `GET`, with their revisions.
    func readable(as user: String, ids: [String]) async throws -> [String: String]
    /// A normal `_changes` feed of `user`: its entries (some perhaps left out), how many were sent, `last_seq`.
    func changes(as user: String, since: String, limit: Int?) async throws -> AccessPage
}

/// One normal feed's response.
struct AccessPage: Sendable {
    /// The entries the test looks at.
    var rows: [JSONValue]
    /// How many entries were sent (for paging with `limit`).
    var sent: Int
    /// `last_seq`.
    var lastSeq: String
}

// MARK: - The sync function

/// The property's routing as JavaScript: `channels` are the revision's channels, `grant` maps a user or
/// `role:NAME` to channels (`access()`), `roles` maps a user to bare role names (`role()`, which wants `role:`).
enum AccessSyncFunction {
    static let source = """
        function (doc, oldDoc) {
          channel(doc.channels);
          if (doc.grant) {
            for (var grantee in doc.grant) { access(grantee, doc.grant[grantee]); }
          }
          if (doc.roles) {
            for (var user in doc.roles) {
              role(user, doc.roles[user].map(function (name) { return "role:" + name; }));
            }
          }
        }
        """
}

// MARK: - DirectAccessHarness

/// The property through ``DocumentStore``, ``DatabasePrincipals`` and ``ChangesFeed`` directly.
struct DirectAccessHarness: AccessHarness {
    let database: GatewayDatabase

    /// An in-memory database routing with the JavaScript ``AccessSyncFunction``, or with the Swift
    /// ``BackfillTests/GrantRouter`` that stands for it.
    static func database(javaScript: Bool) throws -> GatewayDatabase {
        guard javaScript else { return try BackfillTests.database() }
        return try GatewayDatabase(
            config: DatabaseConfig(name: "todo", sync: AccessSyncFunction.source), startTime: 0,
            hasher: PasswordHasher(cost: 4))
    }

    func saveUser(_ name: String, channels: Set<String>, roles: Set<String>) throws {
        try BackfillTests.saveUser(name, channels: channels, roles: roles, in: database)
    }

    func deleteUser(_ name: String) throws {
        try database.principals.deleteUser(named: name)
    }

    func saveRole(_ name: String, channels: Set<String>) throws {
        try database.principals.saveRole(RoleUpdate(name: name, adminChannels: channels))
    }

    func deleteRole(_ name: String) throws {
        try database.principals.deleteRole(named: name)
    }

    func put(id: String, body: JSONValue, parent: String?) throws -> String {
        try database.documents.put(id: id, body: body, parentRevision: parent).description
    }

    func putExisting(id: String, body: JSONValue, history: [String]) throws {
        try database.documents.putExisting(id: id, body: Self.replicated(body, history: history))
    }

    func channels(of user: String) throws -> Set<String>? {
        guard let record = try database.storage.user(named: user) else { return nil }
        return try database.storage.allChannels(of: record)
    }

    func readable(as user: String, ids: [String]) throws -> [String: String] {
        guard try database.storage.user(named: user) != nil else { return [:] }
        let caller = try BackfillTests.caller(user, in: database)
        var readable: [String: String] = [:]
        for id in ids {
            guard let body = try? database.documents.read(id: id, as: caller) else { continue }
            readable[id] = body["_rev"]?.stringValue
        }
        return readable
    }

    func changes(as user: String, since: String, limit: Int?) async throws -> AccessPage {
        let page = try await withDeadline(.seconds(30), "a normal _changes feed") {
            try await BackfillTests.changes(user, since: try ChangeSequence.parse(since), limit: limit, in: database)
        }
        return AccessPage(rows: page.rows.map(\.json), sent: page.rows.count, lastSeq: page.lastSeq.description)
    }

    /// A continuous feed of `user` from 0 with a 1 ms heartbeat, for ``AccessFeed/drain()``.
    func openFeed(as user: String) throws -> AccessFeed {
        let options = ChangesOptions(feed: .continuous, heartbeat: .milliseconds(1))
        let caller = try BackfillTests.caller(user, in: database)
        let reader = ChangesReader(database: database, caller: caller, options: options)
        return AccessFeed(feed: ChangesFeed(reader: reader, notifier: database.changeNotifier))
    }

    /// `body` with `_rev` and `_revisions` for `history` (newest first), as a replicator sends it.
    static func replicated(_ body: JSONValue, history: [String]) -> JSONValue {
        var members = body.objectValue ?? [:]
        let newest = AccessModel.split(history[0])
        members["_rev"] = .string(history[0])
        members["_revisions"] = [
            "start": .int(Int64(newest.generation)),
            "ids": .array(history.map { .string(AccessModel.split($0).digest) }),
        ]
        return .object(members)
    }
}

// MARK: - HTTPAccessHarness

/// The property over HTTP: writes and principals on the admin port, reads as the user (Basic auth) on the public
/// port. Each run uses its own user, role, channel and document names (``reset(seed:)``), so runs share a server.
struct HTTPAccessHarness: AccessHarness {
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

    private func channel(_ base: String) -> String { base == "!" || base == "*" ? base : name(base) }

    private func channels(_ bases: Set<String>) -> JSONValue { .array(bases.sorted().map { .string(channel($0)) }) }

    /// Renames a body's channels, grantees and role names to this run's.
    private func renamed(_ body: JSONValue) -> JSONValue {
        guard var members = body.objectValue else { return body }
        func strings(_ value: JSONValue?) -> [String] { (value?.arrayValue ?? []).compactMap(\.stringValue) }
        if let list = members["channels"] { members["channels"] = .array(strings(list).map { .string(channel($0)) }) }
        if let grants = members["grant"]?.objectValue {
            members["grant"] = .object(
                Dictionary(
                    uniqueKeysWithValues: grants.map { grantee, targets in
                        let principal =
                            grantee.hasPrefix("role:") ? "role:" + name(String(grantee.dropFirst(5))) : name(grantee)
                        return (principal, JSONValue.array(strings(targets).map { .string(channel($0)) }))
                    }))
        }
        if let roles = members["roles"]?.objectValue {
            members["roles"] = .object(
                Dictionary(
                    uniqueKeysWithValues: roles.map { user, names in
                        (name(user), JSONValue.array(strings(names).map { .string(name($0)) }))
                    }))
        }
        return .object(members)
    }

    private func admin(_ method: String, _ path: String, json: JSONValue? = nil) async throws -> HTTPTestClient.Reply {
        let reply =
            if let json {
                try await client.send(method, port: ports.adminPort, path: "/\(database)/\(path)", json: json)
            } else {
                try await client.send(method, port: ports.adminPort, path: "/\(database)/\(path)")
            }
        try #require((200..<300).contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text)")
        return reply
    }

    func saveUser(_ user: String, channels: Set<String>, roles: Set<String>) async throws {
        _ = try await admin(
            "PUT", "_user/\(name(user))",
            json: [
                "password": "pass", "admin_channels": self.channels(channels),
                "admin_roles": .array(roles.sorted().map { .string(name($0)) }),
            ])
    }

    func deleteUser(_ user: String) async throws {
        _ = try await admin("DELETE", "_user/\(name(user))")
    }

    func saveRole(_ role: String, channels: Set<String>) async throws {
        _ = try await admin("PUT", "_role/\(name(role))", json: ["admin_channels": self.channels(channels)])
    }

    func deleteRole(_ role: String) async throws {
        _ = try await admin("DELETE", "_role/\(name(role))")
    }

    func put(id: String, body: JSONValue, parent: String?) async throws -> String {
        let path = name(id) + (parent.map { "?rev=\($0)" } ?? "")
        let reply =
            body["_deleted"] == true ? try await admin("DELETE", path) : try await admin("PUT", path, json: renamed(body))
        return try #require(try reply.jsonValue()["rev"]?.stringValue)
    }

    func putExisting(id: String, body: JSONValue, history: [String]) async throws {
        var document = DirectAccessHarness.replicated(renamed(body), history: history).objectValue ?? [:]
        document["_id"] = .string(name(id))
        let reply = try await admin("POST", "_bulk_docs", json: ["new_edits": false, "docs": [.object(document)]])
        let results = try reply.jsonValue().arrayValue ?? []
        try #require(results.allSatisfy { $0["error"] == nil }, "_bulk_docs: \(reply.text)")
    }

    func channels(of user: String) async throws -> Set<String>? {
        let reply = try await client.send(port: ports.adminPort, path: "/\(database)/_user/\(name(user))")
        if reply.status == 404 { return nil }
        try #require(reply.status == 200, "GET _user/\(name(user)): \(reply.status) \(reply.text)")
        let all = try reply.jsonValue()["all_channels"]?.arrayValue ?? []
        return Set(
            all.compactMap(\.stringValue).map { channel in
                channel.hasPrefix(prefix) ? String(channel.dropFirst(prefix.count)) : channel
            })
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

    func changes(as user: String, since: String, limit: Int?) async throws -> AccessPage {
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
        return AccessPage(rows: rows, sent: parsed.results.count, lastSeq: try #require(parsed.lastSeq))
    }
}

// MARK: - Clients

/// A client's copy: each live document's revision, and where to resume.
struct AccessReplica {
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

    /// Pulls normal feeds from ``lastSeq`` in pages of `limit` until one comes back short (at most 1,000 pages).
    mutating func pull(from harness: some AccessHarness, as user: String, limit: Int?) async throws {
        for _ in 0..<1_000 {
            let page = try await harness.changes(as: user, since: lastSeq, limit: limit)
            apply(page.rows)
            lastSeq = page.lastSeq
            guard let limit, page.sent >= limit else { return }
        }
        Issue.record("_changes for \(user) still sent full pages after 1,000 of them")
    }
}

/// A continuous feed kept open across steps, with the replica it feeds.
struct AccessFeed: Sendable {
    var feed: ChangesFeed
    var replica = AccessReplica()

    /// Applies entries until the feed has nothing more (its 1 ms heartbeat), within 30 s.
    mutating func drain() async throws {
        let (feed, replica) = try await withDeadline(.seconds(30), "a continuous feed reaching its heartbeat") {
            [feed, replica] in
            var feed = feed
            var replica = replica
            while let event = try await feed.next() {
                switch event {
                case .entries(let rows): replica.apply(rows.map(\.json))
                case .caughtUp: continue
                case .heartbeat: return (feed, replica)
                }
            }
            Issue.record("the open feed ended")
            return (feed, replica)
        }
        self.feed = feed
        self.replica = replica
    }
}
