import Testing

@testable import CouchetteGateway

// MARK: - DatabaseRegistryTests

@Suite("Database registry (no HTTP)", .timeLimit(.minutes(5)))
struct DatabaseRegistryTests {
    static let config = GatewayConfig(databases: [
        "todo": DatabaseConfig(name: "todo"),
        "archive": DatabaseConfig(name: "archive", offline: true),
    ])

    @Test("Databases report their info with the load time")
    func info() async throws {
        let registry = try DatabaseRegistry(config: Self.config, now: { 1_700_000_000_000_000 })
        #expect(await registry.names == ["archive", "todo"])
        let info = try await registry.info(forDatabase: "todo")
        var expected = DatabaseInfo(name: "todo", instanceStartTime: 1_700_000_000_000_000, state: .online)
        expected.statistics.fileSize = info.statistics.fileSize  // the storage's own page counts
        expected.statistics.activeSize = info.statistics.activeSize
        #expect(info == expected)
        let object = info.jsonObject
        #expect(object["db_name"] as? String == "todo")
        #expect(object["update_seq"] as? UInt64 == 0)
        #expect(object["committed_update_seq"] as? UInt64 == 0)
        #expect(object["instance_start_time"] as? Int64 == 1_700_000_000_000_000)
        #expect(object["compact_running"] as? Bool == false)
        #expect(object["purge_seq"] as? UInt64 == 0)
        #expect(object["disk_format_version"] as? Int == 0)
        #expect(object["state"] as? String == "Online")
        // CouchDB's counts, which Sync Gateway 1.x leaves out and PouchDB reads.
        #expect(object["doc_count"] as? Int == 0)
        #expect(object["doc_del_count"] as? Int == 0)
    }

    @Test("A database configured offline starts Offline")
    func offline() async throws {
        let registry = try DatabaseRegistry(config: Self.config)
        #expect(try await registry.info(forDatabase: "archive").state == .offline)
    }

    @Test("An unknown database is a 404 naming it")
    func unknown() async throws {
        let registry = try DatabaseRegistry(config: Self.config)
        let error = await #expect(throws: GatewayError.self) { try await registry.info(forDatabase: "nope") }
        #expect(error == .noSuchDatabase("nope"))
        #expect(await registry.database(named: "nope") == nil)
    }

    @Test("The default clock counts microseconds since the epoch")
    func clock() {
        let now = DatabaseRegistry.microsecondsSinceEpoch()
        #expect(now > 1_600_000_000_000_000)
        #expect(now < 10_000_000_000_000_000)
    }
}
