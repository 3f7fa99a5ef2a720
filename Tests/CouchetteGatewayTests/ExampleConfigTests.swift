import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ExampleConfigTests

@Suite("examples/todo/sync-gateway-config.json", .timeLimit(.minutes(5)))
struct ExampleConfigTests {
    /// The example file, found relative to this test file.
    static let examplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // CouchetteGatewayTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("examples/todo/sync-gateway-config.json")
        .path

    @Test("The Adding Security lesson config loads with its users, roles and sync function")
    func loadsTodoExample() throws {
        let config = try GatewayConfig.load(contentsOf: Self.examplePath)
        #expect(config.log == ["HTTP", "Auth"])
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        #expect(config.databaseNames == ["todo"])

        let todo = try #require(config.databases["todo"])
        #expect(todo.server == .memory)
        #expect(todo.users.keys.sorted() == ["admin", "mod", "user1", "user2"])
        #expect(todo.users["user1"] == UserConfig(name: "user1", password: "pass", adminChannels: ["user1"]))
        #expect(todo.users["user2"] == UserConfig(name: "user2", password: "pass", adminChannels: ["user2"]))
        #expect(todo.users["mod"] == UserConfig(name: "mod", password: "pass", adminRoles: ["moderator"]))
        #expect(todo.users["admin"] == UserConfig(name: "admin", password: "pass", adminRoles: ["admin"]))
        #expect(todo.roles == ["moderator": RoleConfig(name: "moderator"), "admin": RoleConfig(name: "admin")])

        let sync = try #require(todo.sync)
        for fragment in [
            "function(doc, oldDoc){",
            #"validateNotEmpty("type", doc.type);"#,
            #"validateReadOnly("type", doc.type, oldDoc.type);"#,
            #"if (getType() == "task-list") {"#,
            "var owner = doc._deleted ? oldDoc.owner : doc.owner;",
            #"requireRole("moderator");"#,
            "requireUser(owner);",
            #"if (!hasPrefix(doc._id, doc.owner + ".")) {"#,
            #"throw({forbidden: "task-list id must be prefixed by list owner"});"#,
            #"validateReadOnly("owner", doc.owner, oldDoc.owner);"#,
            #"channel("task-list." + doc._id);"#,
            #"channel("moderators");"#,
            #"access(owner, "task-list." + doc._id);"#,
            #"access(owner, "task-list." + doc._id + ".users");"#,
            #"access("role:moderator", "task-list." + doc._id);"#,
            "return ((oldDoc == false) || (oldDoc == null || oldDoc._deleted) && !isDelete());",
            "return value.substring(0, prefix.length) == prefix",
        ] {
            #expect(sync.contains(fragment), "sync function lacks \(fragment)")
        }
        // Write access, validation, routing and read access come in this order.
        let order = ["requireRole", "/* Validation */", "channel(\"task-list.", "access(owner"].map {
            sync.range(of: $0)!.lowerBound
        }
        #expect(order == order.sorted())
    }

    @Test("The example's admin interface is loopback only")
    func exampleAdminInterface() throws {
        let config = try GatewayConfig.load(contentsOf: Self.examplePath)
        #expect(config.interface == .defaultPublic)
        #expect(config.adminInterface.host == "127.0.0.1")
    }
}
