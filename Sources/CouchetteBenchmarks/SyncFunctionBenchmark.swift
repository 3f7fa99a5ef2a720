import CouchetteCore
import CouchetteGateway
import Foundation

/// Time per sync function call: the Todo app's function (examples/todo/sync-gateway-config.json) over a mix of
/// accepted and rejected writes, one context, one thread. Printed as `BENCH syncfn.call-us <µs per call> info`;
/// the default function `function(doc){channel(doc.channels);}` is the baseline beside it (the runtime's own cost:
/// JSON in and out, borrowing a context).
struct SyncFunctionBenchmark {
    let calls: Int

    init(calls: Int = 20_000) {
        self.calls = calls
    }

    /// One write: the new revision, its parent and the writer.
    private struct Write {
        let document: JSONValue
        let oldDocument: JSONValue?
        let user: SyncUserContext?
    }

    func run() throws {
        let todo = try JavaScriptSyncFunction(source: try Self.todoSource(), poolSize: 1)
        let baseline = try JavaScriptSyncFunction(source: JavaScriptSyncFunction.defaultSource, poolSize: 1)
        let writes = Self.writes()
        let measured = Self.secondsPerCall(todo, writes: writes, calls: calls)
        let overhead = Self.secondsPerCall(baseline, writes: writes, calls: calls)
        print(
            "# syncfn.call-us: Todo function \(Benchmark.format(measured * 1e6)) µs per call, "
                + "default function \(Benchmark.format(overhead * 1e6)) µs per call (\(calls) calls, one context)")
        print("BENCH syncfn.call-us \(Benchmark.format(measured * 1e6)) info")
    }

    // MARK: - Helpers

    private static func secondsPerCall(_ function: JavaScriptSyncFunction, writes: [Write], calls: Int) -> Double {
        for write in writes.prefix(writes.count) {  // warm-up: JIT and the first context
            for _ in 0..<200 { _ = function.evaluate(document: write.document, oldDocument: write.oldDocument, user: write.user) }
        }
        let seconds = Benchmark.fastest(repetitions: 3) {
            for index in 0..<calls {
                let write = writes[index % writes.count]
                _ = function.evaluate(document: write.document, oldDocument: write.oldDocument, user: write.user)
            }
        }
        return seconds / Double(calls)
    }

    /// The writes of the Todo walkthroughs: lists created by their owner, by another user (403) and by a
    /// moderator, an update, a deletion and a document without type (403).
    private static func writes() -> [Write] {
        let user1 = SyncUserContext(name: "user1", roles: [], channels: ["!", "user1"])
        let moderator = SyncUserContext(name: "mod", roles: ["moderator"], channels: ["!", "moderators"])
        func list(_ id: String, owner: String, name: String = "Groceries") -> JSONValue {
            ["_id": .string(id), "_rev": "1-477f7c4f36a31ce9e86a5f465b168b8a", "type": "task-list",
             "name": .string(name), "owner": .string(owner)]
        }
        let stored = list("user1.2F5FB3E4-CD95-49F7-B232-5836F5869BEA", owner: "user1", name: "Today")
        return [
            Write(document: stored, oldDocument: nil, user: user1),
            Write(document: list("user2.931645E7-84E0-46D1-82E0-0B39E5A70162", owner: "user2"), oldDocument: nil, user: user1),
            Write(document: list("user2.931645E7-84E0-46D1-82E0-0B39E5A70162", owner: "user2"), oldDocument: nil, user: moderator),
            Write(document: list("user1.2F5FB3E4-CD95-49F7-B232-5836F5869BEA", owner: "user1", name: "Tomorrow"),
                  oldDocument: stored, user: user1),
            Write(document: ["_id": "user1.2F5FB3E4-CD95-49F7-B232-5836F5869BEA", "_deleted": true], oldDocument: stored,
                  user: user1),
            Write(document: ["_id": "e498cad0380e30a86ed5572140c94831", "names": "Today"], oldDocument: nil, user: user1),
        ]
    }

    /// The `sync` of the example configuration, found from this file or the current directory.
    static func todoSource() throws -> String {
        let relative = "examples/todo/sync-gateway-config.json"
        let fromSource = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(relative).path
        let path = FileManager.default.fileExists(atPath: fromSource) ? fromSource : relative
        let config = try GatewayConfig.load(contentsOf: path)
        guard let source = config.databases["todo"]?.sync else {
            throw GatewayError.internalError("\(path) has no sync function for the todo database")
        }
        return source
    }
}
