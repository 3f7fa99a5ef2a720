import CouchetteTestSupport
import PropertyBased
import Testing

@testable import CouchetteCore

/// Patching an object's text gives exactly the text of the edited object, serialized, or refuses.
@Suite(.timeLimit(.minutes(5))) struct JSONObjectPatchTests {
    static let names = ["a", "b", "done", "name", "zz", "é", "Z", "a b", "ab"]

    /// A random value the patch accepts in a stored body: no fractions, no escapes.
    static func plainValue(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 7 : 5), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -100_000...100_000, using: &generator))
        case 3, 4:
            let pieces = ["a", "{", "]", ",", ":", "é", " ", "0"]
            return .string(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        case 5:
            return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in plainValue(&generator, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                members[names.randomElement(using: &generator)!] = plainValue(&generator, depth: depth + 1)
            }
            return .object(members)
        }
    }

    @Test func patchingEqualsSerializingTheEditedObject() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var generator = SplitMix64(state: seed)
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                members[Self.names.randomElement(using: &generator)!] = Self.plainValue(&generator, depth: 1)
            }
            var edits: [(name: String, value: JSONValue?)] = []
            var expected = members
            for name in Self.names.shuffled(using: &generator).prefix(Int.random(in: 0...4, using: &generator)) {
                let value: JSONValue? =
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0: nil
                    case 1: .string(["x", "", "quote\"d", "line\nbreak"].randomElement(using: &generator)!)
                    case 2: .int(Int64.random(in: -5...5, using: &generator))
                    case 3: .bool(Bool.random(using: &generator))
                    default: .null
                    }
                edits.append((name, value))
                expected[name] = value
            }
            let base = JSONValue.object(members).serialized()
            let patched = JSONObjectPatch.applying(edits, to: base)
            #expect(patched == JSONValue.object(expected).serialized(), "\(String(decoding: base, as: UTF8.self))")
        }
    }

    @Test func refusesTextItCouldNotReproduce() {
        let edit: [(name: String, value: JSONValue?)] = [("a", .int(1))]
        for text in [
            #"{"b":1.5}"#, #"{"b":1e3}"#, #"{"b":"x\"y"}"#, #"{"b": 1}"#, #"{"b":1,"a":2}"#, #"{"_id":"x"}"#,
            #"{"b":-0}"#, #"{"b":01}"#, #"{"b":12345678901234567}"#, #"{"b":[1, 2]}"#, #"["a"]"#, #"{"b":1"#,
            #"{"b":tru}"#, #"{"b":1,}"#, #"{"b":{"c":1}}}"#, "",
        ] {
            #expect(JSONObjectPatch.applying(edit, to: Array(text.utf8)) == nil, "\(text)")
        }
        // Nor edits it could not write as their serialized and canonical forms agree.
        #expect(JSONObjectPatch.applying([("a", .double(1))], to: Array("{}".utf8)) == nil)
        #expect(JSONObjectPatch.applying([("a", .int(1 << 60))], to: Array("{}".utf8)) == nil)
        #expect(JSONObjectPatch.applying([("_a", .int(1))], to: Array("{}".utf8)) == nil)
        #expect(JSONObjectPatch.applying([("a", .array([]))], to: Array("{}".utf8)) == nil)
    }

    @Test func keepsTheOtherMembersAsTheyAre() {
        let base = Array(#"{"a":[1,{"b":"]}"}],"m":null,"z":true}"#.utf8)
        let patched = JSONObjectPatch.applying([("m", .string("x")), ("n", .int(2)), ("z", nil)], to: base)
        #expect(patched.map { String(decoding: $0, as: UTF8.self) } == #"{"a":[1,{"b":"]}"}],"m":"x","n":2}"#)
    }
}
