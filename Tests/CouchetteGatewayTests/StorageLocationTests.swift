import Testing

@testable import CouchetteGateway

// MARK: - StorageLocationTests

@Suite("Database server URLs", .timeLimit(.minutes(5)))
struct StorageLocationTests {
    @Test(
        "Supported URLs",
        arguments: [
            ("walrus:", StorageLocation.memory),
            ("walrus:.", .directory(".")),
            ("walrus:/var/lib/sg", .directory("/var/lib/sg")),
            ("walrus:data", .directory("data")),
            ("walrus:///abs/dir", .directory("/abs/dir")),
            ("walrus://", .memory),
            ("sqlite:/data/todo.sqlite", .file("/data/todo.sqlite")),
            ("sqlite:todo.sqlite", .file("todo.sqlite")),
            ("sqlite::memory:", .memory),
            ("WALRUS:", .memory),
        ]
    )
    func supported(text: String, location: StorageLocation) throws {
        #expect(try StorageLocation(parsing: text) == location)
    }

    @Test(
        "Unsupported URLs name the field",
        arguments: ["http://localhost:8091", "couchbase://host", "s3://bucket", "sqlite:", ""])
    func unsupported(text: String) throws {
        let error = try #require(throws: GatewayError.self) {
            try StorageLocation(parsing: text, field: "databases.db.server")
        }
        #expect(error.field == "databases.db.server")
        #expect(error.reason.hasPrefix("databases.db.server: "))
    }

    @Test("A PostgreSQL URL's pool_max_conns and connect_timeout are read and written back; bad values are refused")
    func postgresPoolSettings() throws {
        let location = try PostgresLocation(parsing: "postgres://sg:pw@db/couchette?pool_max_conns=6&connect_timeout=2.5")
        #expect(location.maximumConnections == 6)
        #expect(location.timeout == .milliseconds(2_500))
        #expect(try PostgresLocation(parsing: location.description) == location)
        #expect(location.redacted == "postgres://sg:xxxxx@db:5432/couchette?connect_timeout=2.5&pool_max_conns=6")
        let plain = try PostgresLocation(parsing: "postgres://sg@db/couchette")
        #expect(plain.maximumConnections == PostgresLocation.defaultMaximumConnections)
        #expect(!plain.description.contains("pool_max_conns"))
        for bad in ["0", "-1", "2.5", "many", "", "1001"] {
            let error = try #require(throws: GatewayError.self) {
                try PostgresLocation(parsing: "postgres://sg@db/couchette?pool_max_conns=" + bad)
            }
            #expect(error.reason.contains("pool_max_conns"))
        }
    }
}
