import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorGatewayTests

/// The Lite replicator against a real gateway on loopback running the seeds' Todo config (its users and full sync
/// function): pushes go through the sync function, pulls bring only what the user may read, a password change
/// stops the replicator with 401.
@Suite("Replicator against the gateway", .timeLimit(.minutes(5)))
struct ReplicatorGatewayTests {
    /// The example Todo config on loopback port 0.
    static func todoConfig() throws -> GatewayConfig {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/todo/sync-gateway-config.json").path
        var config = try GatewayConfig.load(contentsOf: path)
        config.interface = InterfaceAddress(host: "127.0.0.1", port: 0)
        config.adminInterface = InterfaceAddress(host: "127.0.0.1", port: 0)
        return config
    }

    /// A Lite database in a fresh folder, removed with the folder.
    final class LiteDatabase {
        let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-repl-\(UUID().uuidString)")
        let database: Database

        init(_ name: String) throws {
            var config = DatabaseConfiguration()
            config.directory = folder
            database = try Database(name: name, config: config)
        }

        deinit {
            try? database.close()
            try? FileManager.default.removeItem(atPath: folder)
        }

        var lists: Collection { get throws { try database.defaultCollection() } }

        /// Replicates with the gateway's `todo` database as `user` (password `password`).
        @discardableResult
        func sync(
            port: Int, user: String, password: String = "pass", _ type: ReplicatorType = .pushAndPull,
            channels: [String]? = nil, over transport: ReplicationProtocol = .rest
        ) async throws -> Replicator {
            var config = ReplicatorConfiguration(target: URLEndpoint(url: transport.url(port: port)))
            var collection = CollectionConfiguration(collection: try lists)
            collection.channels = channels
            config.addCollection(try lists, config: collection)
            config.replicatorType = type
            config.authenticator = BasicAuthenticator(username: user, password: password)
            config.batchSize = 2
            let replicator = Replicator(config: config)
            try await replicator.run()
            return replicator
        }

        /// A continuous push and pull with the gateway's `todo` database as user1, not started yet.
        func continuousReplicator(port: Int, over transport: ReplicationProtocol = .rest) throws -> Replicator {
            var config = ReplicatorConfiguration(target: URLEndpoint(url: transport.url(port: port)))
            config.addCollection(try lists)
            config.continuous = true
            config.authenticator = BasicAuthenticator(username: "user1", password: "pass")
            return Replicator(config: config)
        }

        /// Saves a task list.
        func addList(_ id: String, name: String, owner: String = "user1") throws {
            _ = try lists.putProperties(["type": "task-list", "name": name, "owner": owner], documentID: id)
        }

        /// The IDs of the current (non-deleted) documents.
        func documentIDs() throws -> Set<String> {
            Set(try lists.changes(since: 0).filter { !$0.isDeletion }.map(\.documentID))
        }
    }

    @Test("user1 pushes its lists, pulls only what it may read; a moderator sees every list; a second database converges", arguments: ReplicationProtocol.allCases)
    func pushPullWithChannelsAndRoles(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            try phone.addList("user1.groceries", name: "Groceries")
            try phone.addList("user1.chores", name: "Chores")
            // Refused by the sync function (not prefixed by its owner): reported, the rest goes through.
            try phone.addList("user2.stolen", name: "Stolen")
            let pushed = try await phone.sync(port: ports.publicPort, user: "user1", over: transport)
            #expect(pushed.status.error == nil)
            #expect(pushed.rejectedDocuments.map(\.id) == ["user2.stolen"])
            #expect(pushed.rejectedDocuments.first?.error?.status == 403)
            let stored = try await client.send(port: ports.adminPort, path: "/todo/user1.groceries").jsonValue()
            #expect(stored["name"] == "Groceries")
            #expect(try await client.send(port: ports.adminPort, path: "/todo/user2.stolen").status == 404)

            let other = try LiteDatabase("other")
            try other.addList("user2.work", name: "Work", owner: "user2")
            try await other.sync(port: ports.publicPort, user: "user2", over: transport)
            #expect(try other.documentIDs() == ["user2.work"])

            // user1 never sees user2's list; the moderator sees all of them.
            try await phone.sync(port: ports.publicPort, user: "user1", over: transport)
            #expect(try phone.documentIDs() == ["user1.groceries", "user1.chores", "user2.stolen"])
            let moderator = try LiteDatabase("moderator")
            try await moderator.sync(port: ports.publicPort, user: "mod", .pull, over: transport)
            #expect(try moderator.documentIDs() == ["user1.groceries", "user1.chores", "user2.work"])
            // A pull limited to one channel brings only its documents.
            let oneList = try LiteDatabase("one")
            try await oneList.sync(port: ports.publicPort, user: "mod", .pull, channels: ["task-list.user2.work"], over: transport)
            #expect(try oneList.documentIDs() == ["user2.work"])

            // A second database of user1 converges with the same revisions.
            let tablet = try LiteDatabase("tablet")
            try await tablet.sync(port: ports.publicPort, user: "user1", over: transport)
            #expect(try tablet.documentIDs() == ["user1.groceries", "user1.chores"])
            #expect(
                try tablet.lists.currentRevision(documentID: "user1.groceries")?.revisionID
                    == phone.lists.currentRevision(documentID: "user1.groceries")?.revisionID)
        }
    }

    @Test("Two databases edit a list offline: both see the conflict after syncing; a merge on one resolves it everywhere", arguments: ReplicationProtocol.allCases)
    func offlineEditsConflictAndMerge(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            let tablet = try LiteDatabase("tablet")
            try phone.addList("user1.groceries", name: "Groceries")
            try await phone.sync(port: ports.publicPort, user: "user1", over: transport)
            try await tablet.sync(port: ports.publicPort, user: "user1", over: transport)
            for (database, name) in [(phone, "Food"), (tablet, "Drinks")] {
                let edit = try #require(try database.lists.currentRevision(documentID: "user1.groceries")).createRevision()
                edit.userProperties = ["type": "task-list", "name": name, "owner": "user1"]
                _ = try edit.save()
            }
            for database in [phone, tablet, phone] { try await database.sync(port: ports.publicPort, user: "user1", over: transport) }
            let phoneConflict = try phone.lists.conflictingRevisions(documentID: "user1.groceries")
            let tabletConflict = try tablet.lists.conflictingRevisions(documentID: "user1.groceries")
            #expect(phoneConflict.count == 2)
            #expect(Set(phoneConflict.compactMap(\.revisionID)) == Set(tabletConflict.compactMap(\.revisionID)))
            #expect(phoneConflict.first?.revisionID == tabletConflict.first?.revisionID)

            // The n-way merge on the phone: the winner gets the merged name, the other branch a tombstone.
            try phone.database.inTransaction {
                for (index, revision) in phoneConflict.enumerated() {
                    let next = revision.createRevision()
                    if index == 0 {
                        next.userProperties = ["type": "task-list", "name": "Food and drinks", "owner": "user1"]
                    } else {
                        next.isDeletion = true
                    }
                    _ = try next.saveAllowingConflict()
                }
                return true
            }
            for database in [phone, tablet] { try await database.sync(port: ports.publicPort, user: "user1", over: transport) }
            for database in [phone, tablet] {
                #expect(try database.lists.conflictingRevisions(documentID: "user1.groceries").count == 1)
                #expect(
                    try database.lists.currentRevision(documentID: "user1.groceries")?.properties?["name"] as? String
                        == "Food and drinks")
            }
            let open = try await client.send(port: ports.adminPort, path: "/todo/user1.groceries?conflicts=true").jsonValue()
            #expect(open["name"] == "Food and drinks")
            #expect(open["_conflicts"] == nil)
        }
    }

    @Test("A continuous replicator pulls a list written on the gateway later, until stopped", arguments: ReplicationProtocol.allCases)
    func continuousPull(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            let replicator = try phone.continuousReplicator(port: ports.publicPort, over: transport)
            let statuses = replicator.changes()
            let arrivals = try phone.lists.documentChanges(id: "user1.later")
            replicator.start()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator going idle") { $0.status.activity == .idle }
            let reply = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/user1.later",
                json: ["type": "task-list", "name": "Later", "owner": "user1"])
            #expect(reply.status == 201)
            let arrival = await next(arrivals)
            #expect(arrival?.documentID == "user1.later")
            replicator.stop()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator stopping") { $0.status.activity == .stopped }
            #expect(replicator.status.error == nil)
        }
    }

    @Test("A continuous push and pull stops with 401 when the password changes (seed 000), its feed request cut", arguments: ReplicationProtocol.allCases)
    func continuousReplicatorStopsOn401(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            let replicator = try phone.continuousReplicator(port: ports.publicPort, over: transport)
            let statuses = replicator.changes()
            replicator.start()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator going idle") { $0.status.activity == .idle }
            let reply = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/user1", json: ["password": "newpass"])
            #expect(reply.status == 200)
            // A new list wakes the push, which gets 401; the pull's open feed must not keep the replicator going.
            try phone.addList("user1.after", name: "After the change")
            let stopped = try await first(of: statuses, within: .seconds(30), "the replicator stopping") {
                $0.status.activity == .stopped
            }
            #expect(stopped?.status.error?.status == 401)
        }
    }

    @Test("A password changed on the admin port stops the replicator with 401", arguments: ReplicationProtocol.allCases)
    func passwordChangeGives401(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            try phone.addList("user1.groceries", name: "Groceries")
            try await phone.sync(port: ports.publicPort, user: "user1", over: transport)
            let reply = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/user1", json: ["password": "changed"])
            #expect(reply.status == 200)
            var failure: CouchetteError?
            do { try await phone.sync(port: ports.publicPort, user: "user1", over: transport) } catch let error as CouchetteError {
                failure = error
            }
            #expect(failure?.status == 401)
            #expect(failure?.code == .unauthorized)
            // With the new password it works again.
            let again = try await phone.sync(port: ports.publicPort, user: "user1", password: "changed", over: transport)
            #expect(again.status.error == nil)
        }
    }

    @Test("A session cookie and custom headers authenticate; a stale session stops the replicator with 401", arguments: ReplicationProtocol.allCases)
    func sessionAndHeaderAuthenticators(transport: ReplicationProtocol) async throws {
        try await AdminGatewayFixture.run(try Self.todoConfig()) { client, ports, _ in
            let login = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/_session", json: ["name": "user1", "password": "pass"])
            let sessionID = try #require(AdminGatewayFixture.sessionCookie(in: login))
            try await RecordingHTTPProxy.run(targetPort: ports.publicPort) { proxy in
                let phone = try LiteDatabase("phone")
                try phone.addList("user1.groceries", name: "Groceries")
                // (The gateway module has its own `Authenticator`, hence a closure setting it.)
                func replicate(_ authenticate: (inout ReplicatorConfiguration) -> Void) async throws -> Replicator {
                    // The recording proxy speaks HTTP only: a BLIP replicator goes to the gateway itself.
                    var config = ReplicatorConfiguration(
                        target: URLEndpoint(url: transport.url(port: transport == .rest ? proxy.port : ports.publicPort)))
                    config.addCollection(try phone.lists)
                    authenticate(&config)
                    config.headers = ["X-Trace": "phone-1"]
                    let replicator = Replicator(config: config)
                    try? await replicator.run()
                    return replicator
                }
                let bySession = try await replicate { $0.authenticator = SessionAuthenticator(sessionID: sessionID) }
                #expect(bySession.status.error == nil)
                #expect(try await client.send(port: ports.adminPort, path: "/todo/user1.groceries").status == 200)
                if transport == .rest {
                    #expect(proxy.exchanges.allSatisfy { $0.headers["x-trace"] == "phone-1" })
                    #expect(proxy.exchanges.allSatisfy { $0.headers["cookie"] == "SyncGatewaySession=\(sessionID)" })
                }

                let basic = "Basic " + Data("user1:pass".utf8).base64EncodedString()
                let byHeader = try await replicate { $0.authenticator = HeaderAuthenticator(headers: ["Authorization": basic]) }
                #expect(byHeader.status.error == nil)

                let stale = try await replicate { $0.authenticator = SessionAuthenticator(sessionID: "no-such-session") }
                #expect(stale.status.error?.status == 401)
                #expect(stale.status.activity == .stopped)
            }
        }
    }
}
