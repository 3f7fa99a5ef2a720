import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionRuntimeTests

/// Compilation, time limits and the context pool of ``JavaScriptSyncFunction``.
@Suite(.timeLimit(.minutes(5))) struct SyncFunctionRuntimeTests {
    // MARK: Compiling

    @Test func aSyntaxErrorNamesTheLineOfTheSource() throws {
        var lines = (1...14).map { "  channel(doc.c\($0));" }
        lines[0] = "function(doc, oldDoc) {"
        lines[11] = "  var x = };"  // line 12
        lines[13] = "}"
        let error = try #require(throws: GatewayError.self) {
            try JavaScriptSyncFunction(source: lines.joined(separator: "\n"))
        }
        #expect(error.statusCode == 400)
        #expect(error.reason.hasPrefix("Invalid sync function: SyntaxError: Unexpected token '}'"), "\(error.reason)")
        #expect(error.reason.hasSuffix("(line 12)"), "\(error.reason)")
    }

    @Test func aStrayBraceIsReportedWhereItIsNotInTheWrapper() throws {
        let source = "function(doc) {\n  channel(doc.a);\n  }}\n  channel(doc.b);\n}"
        let error = try #require(throws: GatewayError.self) { try JavaScriptSyncFunction(source: source) }
        // JavaScriptCore calls a `}` without its `{` a "Parser error"; the line is the point.
        #expect(error.reason.hasPrefix("Invalid sync function: SyntaxError"), "\(error.reason)")
        #expect(error.reason.hasSuffix("(line 3)"), "\(error.reason)")
    }

    @Test func aSyntaxErrorOnTheFirstLineIsLineOne() throws {
        let error = try #require(throws: GatewayError.self) { try JavaScriptSyncFunction(source: "function(doc {}") }
        #expect(error.reason.hasPrefix("Invalid sync function: SyntaxError"))
        #expect(error.reason.hasSuffix("(line 1)"), "\(error.reason)")
    }

    @Test func anUnfinishedFunctionNamesItsLastLine() throws {
        let error = try #require(throws: GatewayError.self) {
            try JavaScriptSyncFunction(source: "function(doc) {\n  if (doc.a) {\n    channel(doc.a);\n")
        }
        #expect(error.reason.hasPrefix("Invalid sync function: SyntaxError"), "\(error.reason)")
        #expect(error.reason.hasSuffix("(line 4)"), "\(error.reason)")
    }

    @Test(arguments: ["42", "{}", "null", #""function(doc){}""#])
    func aSourceThatIsNotAFunctionIsRefused(source: String) throws {
        let error = try #require(throws: GatewayError.self) { try JavaScriptSyncFunction(source: source) }
        #expect(error.statusCode == 400)
        #expect(error.reason.hasPrefix("Invalid sync function: TypeError: the sync function must be a function"))
    }

    @Test(arguments: [
        "\n  function(doc, oldDoc) { channel(doc.c); }\n\n",
        "// routes by c\n/* block */ function (doc) { channel(doc.c); } // trailing",
        "function(doc) { channel(doc.c); };",
        "function sync(doc) { channel(route(doc)); }\nfunction route(doc) { return doc.c; }",
        "function(doc) { channel(doc.c); }\n\n",
    ])
    func sourcesAsConfigurationFilesWriteThem(source: String) throws {
        let sync = try JavaScriptSyncFunction(source: source)
        #expect(sync.source == source)
        #expect(try sync.route(["c": "a"]).channels == ["a"])
    }

    @Test func theTimeLimitAppliesToCompiling() throws {
        let error = try #require(throws: GatewayError.self) {
            try JavaScriptSyncFunction(
                source: "(function () { while (true) {} return function(doc) {}; })()", timeLimit: .milliseconds(100))
        }
        #expect(error.statusCode == 400)
        #expect(error.reason.contains("time or memory limit"))
    }

    @Test func builtInsCannotBeReachedThroughInternalNames() throws {
        // The wrapper's own variables do not shadow user globals of other names.
        let sync = try JavaScriptSyncFunction.body(#"var out = "mine"; var user = doc.u; channel(out, user);"#)
        #expect(try sync.route(["u": "me"]).channels == ["mine", "me"])
    }

    // MARK: Time limit

    @Test func aRunawayFunctionTimesOutOnceAndTheNextCallSucceeds() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"if (doc.loop) { try { while (true) {} } catch (e) { channel("caught"); } } channel("ok");"#,
            poolSize: 1, timeLimit: .seconds(1))
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: GatewayError.syncFunctionTimedOut) { try sync.route(["loop": true]) }
        #expect(clock.now - start < .seconds(10))
        #expect(GatewayError.syncFunctionTimedOut.reason == "JS sync function timed out")
        #expect(try sync.route().channels == ["ok"])
        #expect(throws: GatewayError.syncFunctionTimedOut) { try sync.route(["loop": true]) }
        #expect(try sync.route().channels == ["ok"])
        #expect(sync.contextCount == 1)
    }

    @Test func aTimeOutIsReportedWithItsDetail() throws {
        let sync = try JavaScriptSyncFunction.body("for (;;) {}", timeLimit: .seconds(1))
        guard case .failed(let error, let detail) = sync.evaluate(document: ["_id": "a"], oldDocument: nil, user: nil)
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(error == .syncFunctionTimedOut)
        #expect(detail.contains("ran longer than"))
    }

    @Test func runawayRecursionIsAnExceptionOnAConcurrencyThread() async throws {
        let sync = try JavaScriptSyncFunction.body("function f(n) { return f(n + 1) + 1; }\nif (doc.deep) { f(0); }")
        let outcome = await Task.detached {
            sync.evaluate(document: ["_id": "a", "deep": true], oldDocument: nil, user: nil)
        }.value
        guard case .failed(let error, let detail) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(error == .syncFunctionException)
        #expect(detail.hasPrefix("RangeError"), "\(detail)")
        #expect(try sync.route().channels.isEmpty)
    }

    // MARK: Pool

    @Test func concurrentCallsGetIndependentResults() async throws {
        let sync = try JavaScriptSyncFunction.body(
            #"""
            requireUser(doc.owner);
            var n = doc.n;
            for (var i = 0; i < 200; i++) { n = (n * 31 + i) % 1000003; }
            channel("ch-" + doc.n);
            access(doc.owner, "ch-" + doc.n);
            if (doc.n % 2 === 0) { role(doc.owner, "role:even"); }
            expiry(doc.n + 1);
            """#, poolSize: 4)
        let results = try await withThrowingTaskGroup(of: (Int, Result<RoutingResult, GatewayError>).self) { group in
            for n in 0..<200 {
                group.addTask {
                    let owner = "user\(n % 7)"
                    let writer = n % 10 == 9 ? "intruder" : owner
                    let user = SyncUserContext(name: writer, roles: [], channels: ["!"])
                    let result = Result { () throws(GatewayError) in
                        try sync.route(["_id": .string("doc\(n)"), "n": .int(Int64(n)), "owner": .string(owner)], user: user)
                    }
                    return (n, result)
                }
            }
            var results: [Int: Result<RoutingResult, GatewayError>] = [:]
            for try await (n, result) in group { results[n] = result }
            return results
        }
        #expect(results.count == 200)
        for (n, result) in results {
            let owner = "user\(n % 7)"
            if n % 10 == 9 {
                #expect(result == .failure(.forbidden("wrong user")), "\(n)")
                continue
            }
            let routed = try result.get()
            #expect(routed.channels == ["ch-\(n)"])
            #expect(routed.access == [owner: ["ch-\(n)"]])
            #expect(routed.roles == (n % 2 == 0 ? [owner: ["even"]] : [:]))
            #expect(routed.expiry != nil)
        }
        #expect(sync.contextCount >= 1 && sync.contextCount <= 4)
    }

    @Test func contextsAreCreatedOnlyWhenNeeded() throws {
        let sync = try JavaScriptSyncFunction.body(#"channel("a");"#, poolSize: 8)
        #expect(sync.poolSize == 8)
        for _ in 0..<20 { _ = try sync.route() }
        #expect(sync.contextCount == 1)
    }

    @Test func theDefaultPoolHasOneContextPerProcessor() throws {
        let sync = try JavaScriptSyncFunction(source: JavaScriptSyncFunction.defaultSource)
        #expect(sync.poolSize == ProcessInfo.processInfo.activeProcessorCount)
        #expect(sync.timeLimit == .seconds(1))
    }
}
