import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionOutputReaderTests

/// The sync function's output array is read straight from its JSON text (``SyncFunctionOutputReader``): it must
/// read what the wrapper writes exactly as a JSON parser would, escapes and numbers included, and fail a call whose
/// output is not the wrapper's shape alone.
@Suite("Sync function: reading the output", .timeLimit(.minutes(2)))
struct SyncFunctionOutputReaderTests {
    /// A call's output as text, for comparing (``SyncFunctionOutput`` holds tuples).
    static func describe(_ output: SyncFunctionOutput) -> String {
        let access = output.access.map { "\($0.principals)->\($0.channels)" }
        let roles = output.roles.map { "\($0.users)->\($0.roles)" }
        let rejection = output.rejection.map { "\($0.status) \($0.message)" } ?? "-"
        let logs = output.logs.map { "\($0.level):\($0.message)" }
        return "\(output.channels) \(access) \(roles) \(output.expiry) \(rejection) \(logs)"
    }

    /// The same fields read from a parsed ``JSONValue`` tree: what the reader must agree with.
    static func reference(_ value: JSONValue) -> String {
        func strings(_ value: JSONValue) -> [String] { value.arrayValue?.compactMap(\.stringValue) ?? [] }
        guard let fields = value.arrayValue else { return "null" }
        let pairs = { (value: JSONValue) in
            (value.arrayValue ?? []).map { "\(strings($0[0] ?? .null))->\(strings($0[1] ?? .null))" }
        }
        var rejection = "-"
        if let reject = fields[4].arrayValue, let status = reject[0].intValue, let message = reject[1].stringValue {
            rejection = "\(status) \(message)"
        }
        let logs = (fields[5].arrayValue ?? []).compactMap { line -> String? in
            guard let level = line[0]?.stringValue, let message = line[1]?.stringValue else { return nil }
            return "\(level):\(message)"
        }
        return "\(strings(fields[0])) \(pairs(fields[1])) \(pairs(fields[2])) \(fields[3].arrayValue ?? []) "
            + "\(rejection) \(logs)"
    }

    /// A string with the characters JSON escapes: quotes, backslashes, control characters, and beyond ASCII.
    static func randomString(_ generator: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "task-list.", "\"", "\\", "/", "\n", "\t", "\u{01}", "é", "日本", "😀", " ", ",", "role:"]
        return (0..<Int(generator.next() % 6)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
            .joined()
    }

    static func randomOutput(_ generator: inout SplitMix64) -> JSONValue {
        func strings() -> JSONValue {
            .array((0..<Int(generator.next() % 4)).map { _ in .string(randomString(&generator)) })
        }
        func pairs() -> JSONValue { .array((0..<Int(generator.next() % 3)).map { _ in [strings(), strings()] }) }
        let numbers: [JSONValue] = [.int(3600), .int(-1), .double(1.5e3), .double(0.25), .int(1_800_000_000)]
        let expiry = JSONValue.array(
            (0..<Int(generator.next() % 3)).map { _ in
                generator.next() % 2 == 0
                    ? numbers[Int(generator.next() % UInt64(numbers.count))] : .string(randomString(&generator))
            })
        let reject: JSONValue = generator.next() % 3 == 0 ? [.int(403), .string(randomString(&generator))] : .null
        let logs = JSONValue.array(
            (0..<Int(generator.next() % 3)).map { _ in ["log", .string(randomString(&generator))] })
        return [strings(), pairs(), pairs(), expiry, reject, logs]
    }

    @Test("Random outputs read as a JSON parser reads them", arguments: 0..<20)
    func readsAsParsed(seed: UInt64) throws {
        var generator = SplitMix64(state: seed &* 0x9E37_79B9 &+ 1)
        let values = (0..<Int(1 + generator.next() % 20)).map { _ -> JSONValue in
            generator.next() % 5 == 0 ? .null : Self.randomOutput(&generator)
        }
        let text = JSONValue.array(values).serialized()
        let outputs = try #require(SyncFunctionOutputReader.read(text))
        #expect(outputs.count == values.count)
        for (value, output) in zip(values, outputs) {
            switch output {
            case nil: #expect(value == .null)
            case .success(let output): #expect(Self.describe(output) == Self.reference(value))
            case .failure(let error): Issue.record("\(value.serializedString()): \(error)")
            }
        }
    }

    @Test("An output not of the wrapper's shape fails that call alone; text that is no array fails the batch")
    func malformed() throws {
        let good = #"[["a"],[],[],[],null,[]]"#
        let text = "[\(good),[1,{\"x\":[\"]\"]}],\(good),null,[[\"a\"],[[[\"u\"]]],[],[],null,[]],\(good)]"
        let outputs = try #require(SyncFunctionOutputReader.read(Array(text.utf8)))
        #expect(outputs.count == 6)
        for index in [0, 2, 5] {
            guard case .success(let output) = outputs[index] else {
                Issue.record("call \(index): \(String(describing: outputs[index]))")
                continue
            }
            #expect(output.channels == ["a"])
        }
        for index in [1, 4] {
            guard case .failure = outputs[index] else {
                Issue.record("call \(index) should be malformed: \(String(describing: outputs[index]))")
                continue
            }
        }
        #expect(outputs[3] == nil)
        for broken in ["", "{}", "null", "[", #"[["unterminated"#, #"[[["a"],[],[],[],null,[]]"#] {
            #expect(SyncFunctionOutputReader.read(Array(broken.utf8)) == nil, "\(broken)")
        }
    }

    @Test("Through JavaScript: escaped names, numbers and console lines reach the outcome intact")
    func throughJavaScript() throws {
        let lines = SyncFunctionBatchTests.Lines()
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc) {
                  channel(doc.name, "q\\"uote", "back\\\\slash", "日本😀");
                  access("u" + doc.n, ["c\\u0001" + doc.name]);
                  expiry(doc.ttl);
                  console.log("line\\n", doc.name, 1.5);
                  if (doc.n == 2) { throw({forbidden: "no \\"" + doc.name + "\\""}); }
                }
                """,
            poolSize: 1, console: lines.console)
        let requests = [1, 2].map { n in
            RoutingRequest(
                document: ["_id": .string("d\(n)"), "name": .string("é\(n)"), "n": .int(Int64(n)), "ttl": 1500.5],
                oldDocument: nil)
        }
        let outcomes = sync.evaluate(requests, user: nil)
        guard case .routed(let routing) = outcomes[0] else {
            Issue.record("\(outcomes[0])")
            return
        }
        #expect(routing.channels == ["é1", "q\"uote", "back\\slash", "日本😀"])
        #expect(routing.access == ["u1": ["c\u{01}é1"]])
        let expiry = try #require(routing.expiry)
        #expect(abs(expiry.timeIntervalSinceNow - 1500) < 60)
        #expect(outcomes[1] == .rejected(.forbidden("no \"é2\"")))
        #expect(lines.all.contains("log line\n é1 1.5"))
    }
}
