import CouchetteCore
import CouchetteTestSupport
import PropertyBased
import Testing

/// Couchbase's JSON deltas: the spec's examples both ways, text edits, refusals, and a property: applying the delta
/// made from any two values to the first gives the second (blip-sync-protocol.md §4.2).
@Suite(.timeLimit(.minutes(2))) struct JSONDeltaTests {
    static func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    @Test(arguments: [
        (#"{"name":"Ann","age":30,"tags":["a","b"],"city":"Oslo"}"#, #"{"name":"Ann","age":31,"tags":["a","b","c"]}"#,
         #"{"age":31,"tags":{"2-":["c"]},"city":[]}"#),
        (#"{"pet":{"kind":"cat","name":"Tom"}}"#, #"{"pet":["cat","Tom"]}"#, #"{"pet":[["cat","Tom"]]}"#),
        (#"{"list":[1,2,3,4]}"#, #"{"list":[1,9]}"#, #"{"list":{"1":9,"2-":[]}}"#),
        (#"{"a":1}"#, #"{"a":1,"b":{"c":[1]}}"#, #"{"b":[{"c":[1]}]}"#),
    ])
    func theSpecsExamples(old: String, new: String, delta: String) throws {
        let (old, new, delta) = (try Self.json(old), try Self.json(new), try Self.json(delta))
        #expect(JSONDelta.make(from: old, to: new) == delta)
        #expect(try JSONDelta.apply(delta, to: old) == new)
    }

    @Test func equalValuesHaveNoDelta() throws {
        #expect(JSONDelta.make(from: try Self.json(#"{"a":1}"#), to: try Self.json(#"{"a":1}"#)) == nil)
        #expect(try JSONDelta.apply([:], to: ["a": 1]) == ["a": 1])
    }

    @Test func textEdits() throws {
        let edited = try JSONDelta.apply(
            try Self.json(#"{"msg":["6=6+there |5=",0,2]}"#), to: try Self.json(#"{"msg":"hello world"}"#))
        #expect(edited == ["msg": "hello there world"])
        // Counts are UTF-8 bytes: "é" is two.
        #expect(try JSONDelta.apply(["2-1=4+ère|", 0, 2], to: "éd") == "dère")
    }

    @Test func malformedOrMisfittingDeltasAreRefused() {
        let cases: [(JSONValue, JSONValue)] = [
            ([], ["a": 1]),  // removing the whole value
            (["5=", 0, 2], "hello world"),  // does not cover the text
            (["11=", 0, 2], 3),  // text edit on a number
            (["3+ab|", 0, 2], ""),  // insertion shorter than its count
            (["a": 1], 3),  // object delta on a number
            (["7": 1], [1, 2]),  // index past the end
            (["3-": [1]], [1, 2]),  // tail past the end
            ([1, 2], ["a": 1]),  // two-item array
        ]
        for (delta, old) in cases {
            #expect(throws: CoreError.self, "\(delta) on \(old)") { try JSONDelta.apply(delta, to: old) }
        }
    }

    @Test func applyingTheDeltaMadeFromTwoValuesGivesTheSecond() async {
        await propertyCheck(count: 400, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let old = Self.value(&random, depth: 0)
            let new = Self.mutated(old, &random, depth: 0)
            guard let delta = JSONDelta.make(from: old, to: new) else {
                #expect(old == new)
                return
            }
            let applied = try JSONDelta.apply(delta, to: old)
            #expect(applied == new, "\(old) -> \(new) by \(delta)")
        }
    }

    private static func value(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0...(depth > 2 ? 3 : 5), using: &random) {
        case 0: return .int(Int64.random(in: -5...5, using: &random))
        case 1: return .string(["", "a", "é", "text"].randomElement(using: &random)!)
        case 2: return [.null, .bool(true), .bool(false)].randomElement(using: &random)!
        case 3: return .double(Double(Int.random(in: 0...9, using: &random)) + 0.5)
        case 4:
            return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                members[["a", "b", "c", "d", "n-", "0"].randomElement(using: &random)!] = value(&random, depth: depth + 1)
            }
            return .object(members)
        }
    }

    /// `value` with some of its parts changed, removed, added or replaced.
    private static func mutated(_ value: JSONValue, _ random: inout SplitMix64, depth: Int) -> JSONValue {
        if Int.random(in: 0...5, using: &random) == 0 { return Self.value(&random, depth: depth) }
        switch value {
        case .object(var members):
            for key in members.keys where Bool.random(using: &random) {
                members[key] = Int.random(in: 0...3, using: &random) == 0 ? nil : mutated(members[key]!, &random, depth: depth + 1)
            }
            if Bool.random(using: &random) { members["e"] = Self.value(&random, depth: depth + 1) }
            return .object(members)
        case .array(var items):
            for index in items.indices where Bool.random(using: &random) {
                items[index] = mutated(items[index], &random, depth: depth + 1)
            }
            if Bool.random(using: &random), !items.isEmpty { items.removeLast(Int.random(in: 1...items.count, using: &random)) }
            if Bool.random(using: &random) { items.append(Self.value(&random, depth: depth + 1)) }
            return .array(items)
        default:
            return value
        }
    }
}
