import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionTodoTests

/// The seeds' sync functions, unchanged: the Todo app's (examples/todo/sync-gateway-config.json, seed 002), the
/// Adding Security lesson's steps (seed 001) and the spec's worked example (sync-function.md §9).
@Suite(.timeLimit(.minutes(5))) struct SyncFunctionTodoTests {
    let user1 = SyncUserContext(name: "user1", roles: [], channels: ["!", "user1"])
    let moderator1 = SyncUserContext(name: "user1", roles: ["moderator"], channels: ["!", "user1"])

    /// The Todo sync function, read from the example configuration.
    static func todo() throws -> JavaScriptSyncFunction {
        let config = try GatewayConfig.load(contentsOf: ExampleConfigTests.examplePath)
        let source = try #require(config.databases["todo"]?.sync)
        return try JavaScriptSyncFunction(source: source)
    }

    static func list(_ id: String, owner: String, name: String = "Groceries") -> JSONValue {
        ["_id": .string(id), "_rev": "1-abc", "type": "task-list", "name": .string(name), "owner": .string(owner)]
    }

    // MARK: Todo (seed 002)

    @Test func aDocumentWithoutTypeIsRejected() throws {
        let sync = try Self.todo()
        #expect(throws: GatewayError.forbidden("type is not provided.")) {
            try sync.route(document: ["_id": "e498", "names": "Today"], oldDocument: nil, user: user1)
        }
    }

    @Test func aListForAnotherOwnerNeedsTheModeratorRole() throws {
        let sync = try Self.todo()
        // requireRole("moderator") fails, is caught, then requireUser("user2") fails.
        #expect(throws: GatewayError.forbidden("wrong user")) {
            try sync.route(document: Self.list("user2.B", owner: "user2"), oldDocument: nil, user: user1)
        }
    }

    @Test func aModeratorCreatesAListForAnotherOwner() throws {
        let sync = try Self.todo()
        let result = try sync.route(document: Self.list("user2.B", owner: "user2"), oldDocument: nil, user: moderator1)
        #expect(result.channels == ["task-list.user2.B", "moderators"])
        #expect(
            result.access == [
                "user2": ["task-list.user2.B", "task-list.user2.B.users"], "role:moderator": ["task-list.user2.B"],
            ])
        #expect(result.roles.isEmpty)
        #expect(result.expiry == nil)
    }

    @Test func anOwnerCreatesTheirOwnList() throws {
        let sync = try Self.todo()
        let result = try sync.route(document: Self.list("user1.A", owner: "user1"), oldDocument: nil, user: user1)
        #expect(result.channels == ["task-list.user1.A", "moderators"])
        #expect(result.access["user1"] == ["task-list.user1.A", "task-list.user1.A.users"])
    }

    @Test func theListIDMustStartWithTheOwner() throws {
        let sync = try Self.todo()
        #expect(throws: GatewayError.forbidden("task-list id must be prefixed by list owner")) {
            try sync.route(document: Self.list("user2.A", owner: "user1"), oldDocument: nil, user: user1)
        }
    }

    @Test func validationMessagesOfTheTodoFunction() throws {
        let sync = try Self.todo()
        let stored = Self.list("user1.A", owner: "user1")
        var unnamed = stored
        unnamed["name"] = nil
        #expect(throws: GatewayError.forbidden("name is not provided.")) {
            try sync.route(document: unnamed, oldDocument: nil, user: user1)
        }
        var retyped = stored
        retyped["type"] = "task"
        #expect(throws: GatewayError.forbidden("type is read-only.")) {
            try sync.route(document: retyped, oldDocument: stored, user: user1)
        }
        var handedOver = stored
        handedOver["owner"] = "user2"
        #expect(throws: GatewayError.forbidden("owner is read-only.")) {
            try sync.route(document: handedOver, oldDocument: stored, user: moderator1)
        }
    }

    @Test func theOwnerDeletesAListUsingTheOldDocument() throws {
        let sync = try Self.todo()
        let stored = Self.list("user1.A", owner: "user1")
        let tombstone: JSONValue = ["_id": "user1.A", "_rev": "2-def", "_deleted": true]
        let result = try sync.route(document: tombstone, oldDocument: stored, user: user1)
        #expect(result.channels == ["task-list.user1.A", "moderators"])
        #expect(result.access["user1"] == ["task-list.user1.A", "task-list.user1.A.users"])
        let other = SyncUserContext(name: "user2", roles: [], channels: ["!"])
        #expect(throws: GatewayError.forbidden("wrong user")) {
            try sync.route(document: tombstone, oldDocument: stored, user: other)
        }
    }

    @Test func theAdminWritesAnyList() throws {
        let sync = try Self.todo()
        let result = try sync.route(document: Self.list("user2.B", owner: "user2"), oldDocument: nil, user: nil)
        #expect(result.channels == ["task-list.user2.B", "moderators"])
    }

    // MARK: The app's other types (the Design lessons' model, examples/todo/app)

    static func task(_ id: String, list: String, owner: String, text: String = "Milk") -> JSONValue {
        [
            "_id": .string(id), "type": "task", "task": .string(text), "complete": false,
            "taskList": ["id": .string(list), "owner": .string(owner)],
        ]
    }

    @Test func aTaskGoesToItsListsChannelForUsersWithAccessOnly() throws {
        let sync = try Self.todo()
        let result = try sync.route(document: Self.task("t1", list: "user1.A", owner: "user1"), oldDocument: nil, user: user1)
        #expect(result.channels == ["task-list.user1.A", "moderators"])
        #expect(result.access.isEmpty)
        // user2 was not invited (no access to the list's channel, not the owner).
        let user2 = SyncUserContext(name: "user2", roles: [], channels: ["!", "user2"])
        #expect(throws: GatewayError.forbidden("wrong user")) {
            try sync.route(document: Self.task("t2", list: "user1.A", owner: "user1"), oldDocument: nil, user: user2)
        }
        // Once invited (the list's channel), user2 adds tasks.
        let invited = SyncUserContext(name: "user2", roles: [], channels: ["!", "user2", "task-list.user1.A"])
        #expect(try sync.route(document: Self.task("t2", list: "user1.A", owner: "user1"), oldDocument: nil, user: invited).channels.contains("task-list.user1.A"))
        #expect(throws: GatewayError.forbidden("taskList is not provided.")) {
            try sync.route(document: ["_id": "t3", "type": "task", "task": "Milk"], oldDocument: nil, user: user1)
        }
    }

    @Test func sharingAListGrantsTheUserItsChannel() throws {
        let sync = try Self.todo()
        let share: JSONValue = [
            "_id": "user1.A.user2", "type": "task-list.user", "taskList": ["id": "user1.A", "owner": "user1"], "username": "user2",
        ]
        let result = try sync.route(document: share, oldDocument: nil, user: user1)
        #expect(result.channels == ["task-list.user1.A.users", "moderators"])
        #expect(result.access == ["user2": ["task-list.user1.A"]])
        let user2 = SyncUserContext(name: "user2", roles: [], channels: ["!", "user2"])
        #expect(throws: GatewayError.forbidden("wrong user")) { try sync.route(document: share, oldDocument: nil, user: user2) }
    }

    @Test func onlyAdminsElectModerators() throws {
        let sync = try Self.todo()
        let election: JSONValue = ["_id": "moderator.user2", "type": "moderator", "username": "user2"]
        #expect(throws: GatewayError.self) { try sync.route(document: election, oldDocument: nil, user: user1) }
        let admin = SyncUserContext(name: "admin", roles: ["admin"], channels: ["!"])
        let result = try sync.route(document: election, oldDocument: nil, user: admin)
        #expect(result.roles == ["user2": ["moderator"]])
        #expect(result.access == ["user2": ["moderators"]])
    }

    // MARK: Adding Security lesson (seed 001)

    @Test func lessonStepOneRejectsDocumentsWithoutType() throws {
        let sync = try JavaScriptSyncFunction(
            source: #"""
                function(doc, oldDoc){
                  /* Validate */
                  // Document type is required and immutable.
                  if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
                  	throw({forbidden: "type property missing"});
                  }
                }
                """#)
        #expect(try sync.route(document: ["_id": "e498", "type": "task-list", "name": "Groceries"], oldDocument: nil, user: user1) == RoutingResult())
        #expect(throws: GatewayError.forbidden("type property missing")) {
            try sync.route(document: ["_id": "e499", "names": "Today"], oldDocument: nil, user: user1)
        }
    }

    @Test func lessonFunctionWithValidationHelpersAndConsoleLog() throws {
        let sync = try JavaScriptSyncFunction(source: SeedSyncFunctions.validationRoutingGrants)
        // The write-access step: user1 may not create user2's list without the moderator role.
        #expect(throws: GatewayError.forbidden("missing role")) {
            try sync.route(
                document: ["_id": "user2.49c9", "name": "Groceries", "type": "task-list", "owner": "user2"],
                oldDocument: nil, user: user1)
        }
        let id = "user1.2F5FB3E4-CD95-49F7-B232-5836F5869BEA"
        let result = try sync.route(
            document: ["_id": .string(id), "name": "Today", "type": "task-list", "owner": "user1"], oldDocument: nil,
            user: user1)
        #expect(result.channels == ["task-list.\(id)", "moderators"])
        #expect(result.access == ["user1": ["task-list.\(id)", "task-list.\(id).users"]])
        #expect(throws: GatewayError.forbidden("_id should be of the form {owner}.{...}")) {
            try sync.route(
                document: ["_id": "user1-x", "name": "Today", "type": "task-list", "owner": "user1"], oldDocument: nil,
                user: user1)
        }
    }

    // MARK: Worked example (sync-function.md §9)

    @Test func specWorkedExample() throws {
        let sync = try JavaScriptSyncFunction(source: Self.specExample)
        // #1: user1 may not write user2's list.
        #expect(throws: GatewayError.forbidden("missing role")) {
            try sync.route(document: Self.list("user2.B", owner: "user2"), oldDocument: nil, user: user1)
        }
        // #2: no type.
        #expect(throws: GatewayError.forbidden("type is required")) {
            try sync.route(document: ["_id": "x", "names": "x"], oldDocument: nil, user: user1)
        }
        // #3: the stored owner decides. (The walk-through says "owner may not change", but the function checks
        // the ID prefix against the new owner first, so that is the message it gives.)
        let stored = Self.list("user1.A", owner: "user1")
        var handedOver = stored
        handedOver["owner"] = "user2"
        #expect(throws: GatewayError.forbidden("_id must be <owner>.<id>")) {
            try sync.route(document: handedOver, oldDocument: stored, user: user1)
        }
        var renamed = stored
        renamed["name"] = "Renamed"
        #expect(try sync.route(document: renamed, oldDocument: stored, user: user1).channels.contains("moderators"))
        // #5: a moderator writes it; the owner gets the grants.
        let result = try sync.route(document: Self.list("user2.B", owner: "user2"), oldDocument: nil, user: moderator1)
        #expect(result.access == ["user2": ["task-list.user2.B", "task-list.user2.B.users"]])
        // #8: the admin makes user2 a moderator.
        let grant = try sync.route(
            document: ["_id": "moderator.user2", "type": "moderator", "username": "user2"], oldDocument: nil, user: nil)
        #expect(grant == RoutingResult(channels: ["moderators"], access: ["role:moderator": ["moderators"]], roles: ["user2": ["moderator"]]))
        #expect(throws: GatewayError.forbidden("missing role")) {
            try sync.route(
                document: ["_id": "moderator.user2", "type": "moderator", "username": "user2"], oldDocument: nil,
                user: moderator1)
        }
        // #10: the owner deletes the list; it stays routed and granted.
        let deletion = try sync.route(
            document: ["_id": "user1.A", "_deleted": true], oldDocument: stored, user: user1)
        #expect(deletion.channels == ["task-list.user1.A", "moderators"])
    }

    /// The JavaScript block of sync-function.md §9.
    static let specExample = #"""
        function (doc, oldDoc) {
          // ---- validation helpers (each throws a 403) ----
          function mustHave(field, value) {
            if (value === undefined || value === null || value === "") throw({forbidden: field + " is required"});
          }
          function mustBeOwnerPrefixed(id, owner) {
            var parts = id.split(".");
            if (parts.length !== 2 || parts[0] !== owner) throw({forbidden: "_id must be <owner>.<id>"});
          }
          function mustNotChange(field) {
            if (oldDoc && !oldDoc._deleted && doc[field] !== oldDoc[field]) throw({forbidden: field + " may not change"});
          }
          var live = !doc._deleted;
          var prev = (oldDoc && !oldDoc._deleted) ? oldDoc : null;

          // ---- every document needs a type that never changes ----
          var type = live ? doc.type : (prev && prev.type);
          if (!type) throw({forbidden: "type is required"});
          if (live && prev && prev.type !== doc.type) throw({forbidden: "type may not change"});

          if (type === "task-list") {
            // trust the stored owner on updates/deletes, the proposed one only on creation
            var owner = prev ? prev.owner : doc.owner;
            // write access: owners edit their own lists, moderators edit anybody's
            try { requireUser(owner); } catch (e) { requireRole("moderator"); }
            if (live) {
              mustHave("name", doc.name);
              mustHave("owner", doc.owner);
              mustBeOwnerPrefixed(doc._id, doc.owner);
              mustNotChange("owner");
            }
            // routing
            channel("task-list." + doc._id);
            channel("moderators");
            // read access for the owner (tombstones keep the grant so the deletion reaches the owner)
            access(owner, "task-list." + doc._id);
            access(owner, "task-list." + doc._id + ".users");
          } else if (type === "moderator") {
            requireRole("admin");                       // SG ≥ 2.1 could use requireAdmin()
            var who = live ? doc.username : (prev && prev.username);
            mustHave("username", who);
            if (live) { role(who, "role:moderator"); }  // tombstone ⇒ no call ⇒ role revoked
            channel("moderators");
            access("role:moderator", "moderators");
          } else {
            throw({forbidden: "unknown type " + type});
          }
        }
        """#
}
