import CouchetteCore
import Foundation
import Logging
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionLimitsTests

/// The sync function cannot exhaust the server (a heap limit per context on top of the time limit), and its
/// `console` lines reach the log under the `Javascript` key.
@Suite("Sync function: memory limit and console", .timeLimit(.minutes(5)))
struct SyncFunctionLimitsTests {
    /// Lines a console received.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var console: SyncFunctionConsole {
            SyncFunctionConsole { [self] level, text in lines.withLock { $0.append("\(level) \(text)") } }
        }
    }

    @Test("A function allocating in a loop fails that write with a clear error; the next call succeeds")
    func allocatingInALoopFails() throws {
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc) {
                  if (doc.hog) { var kept = []; for (;;) { kept.push(new Array(100000).fill(doc._id)); } }
                  channel("ok");
                }
                """,
            poolSize: 1, timeLimit: .seconds(30), memoryLimit: 32 << 20)
        let start = ContinuousClock.now
        let outcome = sync.evaluate(document: ["_id": "a", "hog": true], oldDocument: nil, user: nil)
        guard case .failed(let error, let detail) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(error == .syncFunctionOutOfMemory)
        #expect(error.reason == "JS sync function exceeded its memory limit")
        #expect(detail.contains("32 MiB"))
        // Stopped by the memory check, long before the 30 s time limit.
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(try sync.route(document: ["_id": "b"], oldDocument: nil, user: nil).channels == ["ok"])
    }

    @Test("A big allocation in one step (array buffers, long strings) counts too")
    func extraMemoryCounts() throws {
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc) {
                  var buffers = [];
                  for (;;) { var b = new ArrayBuffer(8 << 20); new Uint8Array(b).fill(1); buffers.push(b); }
                }
                """,
            poolSize: 1, timeLimit: .seconds(30), memoryLimit: 32 << 20)
        #expect(throws: GatewayError.syncFunctionOutOfMemory) {
            try sync.route(document: ["_id": "a"], oldDocument: nil, user: nil)
        }
    }

    @Test("console.log, info, warn and error lines reach the console with their level; values as JSON")
    func consoleLines() throws {
        let lines = Lines()
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc, oldDoc) {
                  console.log("saw", doc._id, {n: 1}, [2], null, undefined, 3.5);
                  console.info("info");
                  console.warn("careful");
                  console.error("bad", doc.type);
                  for (var i = 0; i < 500; i++) { console.log("line " + i); }
                  channel("x");
                }
                """,
            poolSize: 1, console: lines.console)
        #expect(try sync.route(document: ["_id": "d1", "type": "task"], oldDocument: nil, user: nil).channels == ["x"])
        let all = lines.all
        #expect(Array(all.prefix(4)) == [#"log saw d1 {"n":1} [2] null undefined 3.5"#, "info info", "warn careful", "error bad task"])
        #expect(all.count == 100, "at most 100 lines a call")
    }

    @Test("Over HTTP: console lines are logged under Javascript when that key is on; warn and error always")
    func consoleOverHTTP() async throws {
        var config = GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "db", sync: #"function(doc) { console.log("routing", doc._id); console.error("oops", doc._id); channel(doc._id); }"#)
        ])
        config.log = ["Javascript"]
        let captured = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(lines: captured) }
        try await GatewayFixture.withRunning(try GatewayServer(config: config, logger: logger)) { client, ports in
            let reply = try await client.send("PUT", port: ports.adminPort, path: "/db/doc1", json: ["v": 1])
            #expect(reply.status == 201)
            #expect(captured.contains { $0 == "Javascript: db: routing doc1" })
            #expect(captured.contains { $0 == "Javascript: db: oops doc1" })
        }
    }

    @Test("Over HTTP: a sync function that allocates without bound is a 500 for that write; the gateway goes on")
    func memoryLimitOverHTTP() async throws {
        let config = GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "db",
                sync: "function(doc) { if (doc.hog) { var s = []; for (;;) { s.push(new Array(100000).fill(1)); } } channel('all'); }")
        ])
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let hog = try await client.send("PUT", port: ports.adminPort, path: "/db/hog", json: ["hog": true])
            #expect(hog.status == 500)
            #expect(hog.text.contains("JS sync function exceeded its memory limit"), "\(hog.text)")
            #expect(try await client.send(port: ports.adminPort, path: "/db/hog").status == 404)
            #expect(try await client.send("PUT", port: ports.adminPort, path: "/db/fine", json: ["v": 1]).status == 201)
        }
    }
}
