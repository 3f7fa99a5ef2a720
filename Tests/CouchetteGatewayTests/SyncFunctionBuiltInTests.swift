import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - Fixture

extension JavaScriptSyncFunction {
    /// A sync function whose body is `body`, inside `function(doc, oldDoc, meta) {…}` (the body starts on line 2).
    static func body(_ body: String, poolSize: Int = 1, timeLimit: Duration = .seconds(5)) throws
        -> JavaScriptSyncFunction
    {
        try JavaScriptSyncFunction(
            source: "function(doc, oldDoc, meta) {\n\(body)\n}", poolSize: poolSize, timeLimit: timeLimit)
    }

    /// Runs the function for a document with `_id` "doc" and `members`, as the admin unless a user is given.
    func route(_ members: [String: JSONValue] = [:], old: JSONValue? = nil, user: SyncUserContext? = nil)
        throws(GatewayError) -> RoutingResult
    {
        var document = members
        document["_id"] = document["_id"] ?? "doc"
        return try route(document: .object(document), oldDocument: old, user: user)
    }
}

// MARK: - SyncFunctionBuiltInTests

/// `channel`, `access`, `role`, `expiry` and `reject`, with the edge cases of sync-function.md §3.
@Suite(.timeLimit(.minutes(5))) struct SyncFunctionBuiltInTests {
    // MARK: channel

    @Test func channelTakesStringsArraysAndVarargsAndAccumulates() throws {
        let sync = try JavaScriptSyncFunction.body(#"channel("a"); channel(["b", "c"]); channel("d", ["e"], "a");"#)
        #expect(try sync.route().channels == ["a", "b", "c", "d", "e"])
    }

    @Test func channelIgnoresNullUndefinedAndNonStrings() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"channel(null); channel(undefined); channel(); channel(5); channel({a: 1}); channel(["x", 7, null, ["y"], "z"]);"#)
        #expect(try sync.route().channels == ["x", "z"])
    }

    @Test func channelStarCollapsesTheSet() throws {
        let sync = try JavaScriptSyncFunction.body(#"channel("a", "*"); channel("b");"#)
        #expect(try sync.route().channels == ["*"])
    }

    @Test(arguments: [#"channel("a,b")"#, #"channel("")"#, #"channel(["ok", "x,y"])"#])
    func invalidChannelNameIsAnException(call: String) throws {
        let sync = try JavaScriptSyncFunction.body(call)
        #expect(throws: GatewayError.syncFunctionException) { try sync.route() }
        guard case .failed(_, let detail) = sync.evaluate(document: ["_id": "doc"], oldDocument: nil, user: nil) else {
            Issue.record("expected a failure")
            return
        }
        #expect(detail.contains("invalid channel name"))
    }

    @Test func invalidChannelWinsOverARejectionAsInSyncGateway() throws {
        let sync = try JavaScriptSyncFunction.body(#"channel("a,b"); throw({forbidden: "no"});"#)
        #expect(throws: GatewayError.syncFunctionException) { try sync.route() }
    }

    @Test func defaultSourceRoutesTheChannelsProperty() throws {
        let sync = try JavaScriptSyncFunction(source: JavaScriptSyncFunction.defaultSource)
        #expect(sync.source == "function(doc){channel(doc.channels);}")
        #expect(try sync.route(["channels": ["a", "b"]]).channels == ["a", "b"])
        #expect(try sync.route(["channels": "solo"]).channels == ["solo"])
        #expect(try sync.route(["title": "none"]).channels == [])
        #expect(try sync.route(["channels": ["*", "a"]]).channels == ["*"])
    }

    // MARK: access

    @Test func accessGrantsUsersAndRoles() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"""
            access("user1", "a");
            access(["user1", "user2"], ["b", "c"]);
            access("role:moderator", "a");
            access("user1", "a");
            """#)
        let result = try sync.route()
        #expect(result.access == ["user1": ["a", "b", "c"], "user2": ["b", "c"], "role:moderator": ["a"]])
        #expect(result.channels.isEmpty)
    }

    @Test func accessDropsStarAndIgnoresNull() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"access("user1", "*"); access("user2", ["*", "b"]); access(null, "c"); access("user3", null); access(["user4", 5], [1, "d"]);"#)
        #expect(try sync.route().access == ["user2": ["b"], "user4": ["d"]])
    }

    @Test(arguments: [#"access("bad name", "a")"#, #"access("role:bad:name", "a")"#, #"access(["ok", "é"], "a")"#])
    func accessToAnInvalidPrincipalIsAnError(call: String) throws {
        let sync = try JavaScriptSyncFunction.body(call)
        #expect(throws: GatewayError.syncFunctionError) { try sync.route() }
        #expect(GatewayError.syncFunctionError.reason == "Error in JS sync function")
    }

    @Test func accessToAnInvalidChannelIsAnException() throws {
        let sync = try JavaScriptSyncFunction.body(#"access("user1", "a,b")"#)
        #expect(throws: GatewayError.syncFunctionException) { try sync.route() }
    }

    // MARK: role

    @Test func roleGrantsBareRoleNames() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"role("user1", "role:moderator"); role(["user1", "user2"], ["role:admin"]); role(null, "role:x"); role("user3", null);"#)
        #expect(try sync.route().roles == ["user1": ["moderator", "admin"], "user2": ["admin"]])
    }

    @Test(arguments: [#"role("user1", "moderator")"#, #"role("user1", ["role:ok", "admin"])"#])
    func roleWithoutThePrefixIsAnException(call: String) throws {
        let sync = try JavaScriptSyncFunction.body(call)
        #expect(throws: GatewayError.syncFunctionException) { try sync.route() }
        #expect(GatewayError.syncFunctionException.reason == "Exception in JS sync function")
    }

    @Test(arguments: [#"role("bad user", "role:moderator")"#, #"role("user1", "role:bad role")"#])
    func roleWithAnInvalidNameIsAnError(call: String) throws {
        let sync = try JavaScriptSyncFunction.body(call)
        #expect(throws: GatewayError.syncFunctionError) { try sync.route() }
    }

    // MARK: expiry

    @Test func expiryUpToThirtyDaysCountsFromNow() throws {
        let sync = try JavaScriptSyncFunction.body("expiry(doc.ttl);")
        for ttl: JSONValue in [60, "3600", 2_592_000, 90.9] {
            let before = Date()
            let expiry = try #require(try sync.route(["ttl": ttl]).expiry)
            let after = Date()
            let seconds = TimeInterval(ttl.intValue ?? ttl.stringValue.flatMap(Int64.init) ?? Int64(ttl.doubleValue ?? 0))
            #expect(expiry >= before.addingTimeInterval(seconds - 1) && expiry <= after.addingTimeInterval(seconds + 1))
        }
    }

    @Test func expiryAboveThirtyDaysIsAUnixTime() throws {
        let sync = try JavaScriptSyncFunction.body("expiry(doc.ttl);")
        #expect(try sync.route(["ttl": 2_592_001]).expiry == Date(timeIntervalSince1970: 2_592_001))
        #expect(try sync.route(["ttl": 1_893_456_000]).expiry == Date(timeIntervalSince1970: 1_893_456_000))
        #expect(try sync.route(["ttl": "1893456000"]).expiry == Date(timeIntervalSince1970: 1_893_456_000))
    }

    @Test func expiryAcceptsISO8601Dates() throws {
        let sync = try JavaScriptSyncFunction.body("expiry(doc.ttl);")
        #expect(try sync.route(["ttl": "2030-01-01T00:00:00Z"]).expiry == Date(timeIntervalSince1970: 1_893_456_000))
        #expect(try sync.route(["ttl": "2030-01-01T00:00:00.500Z"]).expiry == Date(timeIntervalSince1970: 1_893_456_000.5))
        #expect(try sync.route(["ttl": "2030-01-01T02:00:00+02:00"]).expiry == Date(timeIntervalSince1970: 1_893_456_000))
    }

    @Test func expiryIgnoresNullAndInvalidValues() throws {
        let sync = try JavaScriptSyncFunction.body("expiry(doc.ttl);")
        for ttl: JSONValue in [.null, "soon", -5, 4_294_967_296, ["a"], true, "12abc"] {
            #expect(try sync.route(["ttl": ttl]).expiry == nil, "\(ttl)")
        }
        #expect(try JavaScriptSyncFunction.body("expiry();").route().expiry == nil)
        #expect(try JavaScriptSyncFunction.body("expiry(NaN); expiry(Infinity);").route().expiry == nil)
    }

    @Test func lastValidExpiryWins() throws {
        let later = try JavaScriptSyncFunction.body(#"expiry(1893456000); expiry("1993456000");"#)
        #expect(try later.route().expiry == Date(timeIntervalSince1970: 1_993_456_000))
        let invalidLast = try JavaScriptSyncFunction.body(#"expiry(1893456000); expiry("never"); expiry(null);"#)
        #expect(try invalidLast.route().expiry == Date(timeIntervalSince1970: 1_893_456_000))
        let zeroLast = try JavaScriptSyncFunction.body("expiry(1893456000); expiry(0);")
        #expect(try zeroLast.route().expiry == nil)
    }

    // MARK: reject

    @Test func rejectSetsTheStatusAndTheFirstCallWins() throws {
        let sync = try JavaScriptSyncFunction.body(#"channel("a"); reject(409, "busy"); reject(403, "second"); channel("b");"#)
        #expect(throws: GatewayError(statusCode: 409, reason: "busy")) { try sync.route() }
        let low = try JavaScriptSyncFunction.body(#"reject(200, "fine"); channel("a");"#)
        #expect(try low.route().channels == ["a"])
    }

    // MARK: Arguments

    @Test func argumentsAreTheDocumentTheParentAndMeta() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"""
            channel("id:" + doc._id, "old:" + (oldDoc === null ? "null" : oldDoc.title));
            channel("xattrs:" + JSON.stringify(meta));
            channel("deleted:" + (doc._deleted === true));
            channel("nested:" + doc.list[1].name + "|" + doc.text);
            """#)
        let document: [String: JSONValue] = [
            "_id": "a", "_deleted": true, "list": [1, ["name": "élan ✓"]], "text": "quote \" back\\slash \u{0} nul",
        ]
        #expect(
            try sync.route(document).channels == [
                "id:a", "old:null", "xattrs:{\"xattrs\":{}}", "deleted:true", "nested:élan ✓|quote \" back\\slash \u{0} nul",
            ])
        #expect(try sync.route(document, old: ["_id": "a", "title": "before"]).channels.contains("old:before"))
    }

    @Test func integersBeyondTwoToThe53LosePrecisionInJavaScript() throws {
        // Documented limitation: documents reach JavaScript through JSON.parse, whose numbers are doubles.
        let sync = try JavaScriptSyncFunction.body("channel(String(doc.small), String(doc.big));")
        let result = try sync.route(["small": .int(9_007_199_254_740_991), "big": .int(9_007_199_254_740_993)])
        #expect(result.channels == ["9007199254740991", "9007199254740992"])
    }

    @Test func changesToTheArgumentsStayInJavaScript() throws {
        let sync = try JavaScriptSyncFunction.body(#"doc.owner = "mallory"; channel(doc.owner);"#)
        let document: JSONValue = ["_id": "doc", "owner": "alice"]
        #expect(try sync.route(document: document, oldDocument: nil, user: nil).channels == ["mallory"])
        #expect(document["owner"] == "alice")
    }

    @Test func callsOfOneInvocationDoNotLeakIntoTheNext() throws {
        let sync = try JavaScriptSyncFunction.body(#"if (doc.first) { channel("a"); access("user1", "a"); expiry(60); }"#)
        #expect(try sync.route(["first": true]).channels == ["a"])
        let second = try sync.route()
        #expect(second == RoutingResult())
    }

    @Test func outputsOfARejectedInvocationAreDiscarded() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"channel("a"); access("user1", "a"); role("user1", "role:x"); expiry(60); throw({forbidden: "nope"});"#)
        let outcome = sync.evaluate(document: ["_id": "doc"], oldDocument: nil, user: nil)
        #expect(outcome == .rejected(.forbidden("nope")))
    }
}
