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
}
