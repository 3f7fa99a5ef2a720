import CouchetteCore
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionRequireTests

/// `requireUser`, `requireRole`, `requireAccess`, `requireAdmin` and thrown rejections (sync-function.md §3–§5).
@Suite(.timeLimit(.minutes(5))) struct SyncFunctionRequireTests {
    let user1 = SyncUserContext(name: "user1", roles: ["editor"], channels: ["!", "user1", "lists"])
    let guest = SyncUserContext(name: "", roles: [], channels: ["!"])
    let allChannels = SyncUserContext(name: "reader", roles: [], channels: ["*", "!"])

    // MARK: requireUser

    @Test func requireUserPassesForANamedUser() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireUser(doc.who); channel("ok");"#)
        #expect(try sync.route(["who": "user1"], user: user1).channels == ["ok"])
        #expect(try sync.route(["who": ["user2", "user1"]], user: user1).channels == ["ok"])
        #expect(try sync.route(["who": ""], user: guest).channels == ["ok"])
    }

    @Test func requireUserRejectsOthersAndNull() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireUser(doc.who); channel("ok");"#)
        for who: JSONValue in ["user2", ["user2", "user3"], .null, [], "role:user1"] {
            #expect(throws: GatewayError.forbidden("wrong user"), "\(who)") { try sync.route(["who": who], user: user1) }
        }
        #expect(throws: GatewayError.forbidden("wrong user")) { try sync.route(user: user1) }  // undefined
        #expect(throws: GatewayError.forbidden("wrong user")) { try sync.route(["who": "user1"], user: guest) }
    }

    // MARK: requireRole

    @Test func requireRoleAcceptsBareAndPrefixedNames() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireRole(doc.roles); channel("ok");"#)
        for roles: JSONValue in ["editor", "role:editor", ["admin", "editor"], ["role:admin", "role:editor"]] {
            #expect(try sync.route(["roles": roles], user: user1).channels == ["ok"], "\(roles)")
        }
    }

    @Test func requireRoleRejectsMissingRoles() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireRole(doc.roles); channel("ok");"#)
        for roles: JSONValue in ["admin", ["admin"], .null, [], "Editor", "constructor", "__proto__", "toString"] {
            #expect(throws: GatewayError.forbidden("missing role"), "\(roles)") {
                try sync.route(["roles": roles], user: user1)
            }
        }
    }

    // MARK: requireAccess

    @Test func requireAccessChecksTheChannelListLiterally() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireAccess(doc.channels); channel("ok");"#)
        for channels: JSONValue in ["lists", "!", ["x", "user1"]] {
            #expect(try sync.route(["channels": channels], user: user1).channels == ["ok"], "\(channels)")
        }
        for channels: JSONValue in ["other", .null, [], ["x", "y"], "*"] {
            #expect(throws: GatewayError.forbidden("missing channel access"), "\(channels)") {
                try sync.route(["channels": channels], user: user1)
            }
        }
    }

    @Test func aStarGrantDoesNotSatisfyRequireAccess() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireAccess("lists");"#)
        #expect(throws: GatewayError.forbidden("missing channel access")) { try sync.route(user: allChannels) }
    }

    @Test func grantsOfTheSameInvocationDoNotSatisfyRequireAccess() throws {
        let sync = try JavaScriptSyncFunction.body(#"access("user1", "new"); requireAccess("new");"#)
        #expect(throws: GatewayError.forbidden("missing channel access")) { try sync.route(user: user1) }
    }

    // MARK: requireAdmin

    @Test func requireAdminPassesOnlyWithoutAUser() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireAdmin(); channel("ok");"#)
        #expect(try sync.route().channels == ["ok"])
        #expect(throws: GatewayError.forbidden("admin required")) { try sync.route(user: user1) }
        #expect(throws: GatewayError.forbidden("admin required")) { try sync.route(user: guest) }
    }

    // MARK: Admin bypass

    @Test func everyRequirePassesForTheAdmin() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"""
            requireUser("nobody"); requireUser(null); requireRole("nothing"); requireAccess("nowhere");
            requireAccess(null); requireAdmin();
            channel("ok"); access("user1", "ok"); role("user1", "role:editor");
            """#)
        let result = try sync.route()
        #expect(result == RoutingResult(channels: ["ok"], access: ["user1": ["ok"]], roles: ["user1": ["editor"]]))
    }

    @Test func theAdminStillMeetsThrowsAndValidation() throws {
        let sync = try JavaScriptSyncFunction.body(#"if (!doc.type) throw({forbidden: "type is required"});"#)
        #expect(throws: GatewayError.forbidden("type is required")) { try sync.route() }
    }

    // MARK: Catching

    @Test func requireFailuresCanBeCaught() throws {
        // Seed 001 (Adding Security): owners write their lists, moderators anybody's.
        let sync = try JavaScriptSyncFunction.body(
            #"""
            try { requireUser(doc.owner); } catch (e) { requireRole("moderator"); }
            channel("lists");
            """#)
        #expect(try sync.route(["owner": "user1"], user: user1).channels == ["lists"])
        #expect(throws: GatewayError.forbidden("missing role")) { try sync.route(["owner": "user2"], user: user1) }
        let moderator = SyncUserContext(name: "mod", roles: ["moderator"], channels: ["!"])
        #expect(try sync.route(["owner": "user2"], user: moderator).channels == ["lists"])
    }

    @Test func aCaughtRequireFailureIsAForbiddenObject() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"""
            try { requireUser("x"); } catch (e) { channel(e.forbidden); }
            try { requireRole("x"); } catch (e) { channel(e.forbidden); }
            try { requireAccess("x"); } catch (e) { channel(e.forbidden); }
            try { requireAdmin(); } catch (e) { channel(e.forbidden); }
            """#)
        #expect(
            try sync.route(user: user1).channels == ["wrong user", "missing role", "missing channel access", "admin required"])
    }

    // MARK: Throws

    @Test func throwForbiddenIs403() throws {
        let sync = try JavaScriptSyncFunction.body(#"throw({forbidden: "type is required"});"#)
        #expect(throws: GatewayError.forbidden("type is required")) { try sync.route(user: user1) }
    }

    @Test func throwUnauthorizedIs401() throws {
        let sync = try JavaScriptSyncFunction.body(#"throw({unauthorized: "log in first"});"#)
        let error = try #require(throws: GatewayError.self) { try sync.route(user: user1) }
        #expect(error.statusCode == 401)
        #expect(error.reason == "log in first")
    }

    @Test(arguments: [
        #"throw("a string");"#, #"throw(new Error("secret " + doc.secret));"#, #"throw({forbidden: ""});"#,
        #"throw(null);"#, #"throw({other: 1});"#, "undefinedFunction();", "null.x;", #"JSON.parse("{");"#,
    ])
    func otherExceptionsAre500WithoutDetails(body: String) throws {
        let sync = try JavaScriptSyncFunction.body(body)
        let error = try #require(throws: GatewayError.self) { try sync.route(["secret": "s3cr3t"], user: user1) }
        #expect(error == .syncFunctionException)
        #expect(error.statusCode == 500)
        #expect(error.reason == "Exception in JS sync function")
        #expect(!error.description.contains("s3cr3t"))
    }

    @Test func exceptionDetailsAreAvailableForLogs() throws {
        let sync = try JavaScriptSyncFunction.body(#"var x = 1;\#nthrow(new Error("secret " + doc.secret));"#)
        let outcome = sync.evaluate(document: ["_id": "doc", "secret": "s3cr3t"], oldDocument: nil, user: nil)
        #expect(outcome == .failed(.syncFunctionException, detail: "Error: secret s3cr3t (line 3)"))
        let missing = try JavaScriptSyncFunction.body("\n\nnotDefined(doc);")
        guard case .failed(_, let detail) = missing.evaluate(document: ["_id": "doc"], oldDocument: nil, user: nil) else {
            Issue.record("expected a failure")
            return
        }
        #expect(detail.contains("ReferenceError") && detail.contains("notDefined") && detail.hasSuffix("(line 4)"))
    }
}
