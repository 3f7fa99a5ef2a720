import CouchetteTestSupport
import Foundation
import PropertyBased
import Testing

@testable import CouchetteCore

/// Plain Foundation values written straight to text give what converting them to JSON values and serializing
/// gives, which is also their canonical form; anything else is refused.
@Suite(.timeLimit(.minutes(5))) struct PlainJSONSerializerTests {
    static func plainValue(_ generator: inout SplitMix64, depth: Int) -> Any {
        switch Int.random(in: 0..<(depth < 3 ? 10 : 7), using: &generator) {
        case 0: return NSNull()
        case 1: return Bool.random(using: &generator)
        case 2: return Int.random(in: -100_000...100_000, using: &generator)
        case 3: return Double(Int.random(in: -400...400, using: &generator)) + [0.5, 0.125, 0.1, 1e-7].randomElement(using: &generator)!
        case 4, 5, 6:
            let pieces = ["a", "{", "\"", "\\", "\n", "é", " ", "\u{1}", "😀"]
            return (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        case 7: return (0..<Int.random(in: 0...3, using: &generator)).map { _ in plainValue(&generator, depth: depth + 1) }
        case 8: return ["x": "y", "a": String(depth)]
        default:
            var members: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                members[["a", "_b", "é", "Z", "zz"].randomElement(using: &generator)!] = plainValue(&generator, depth: depth + 1)
            }
            return members
        }
    }

    @Test func writesWhatSerializingTheConvertedValuesWrites() async {
        await propertyCheck(count: 500, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var generator = SplitMix64(state: seed)
            var members: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                members[["a", "b", "name", "é", "tags"].randomElement(using: &generator)!] =
                    Self.plainValue(&generator, depth: 1)
            }
            let converted = try JSONValue(foundationObject: members)
            let text = try #require(PlainJSONSerializer.serialized(members))
            #expect(text == converted.serialized())
            #expect(text == converted.canonicalBytes)
        }
    }

    @Test func refusesValuesItCannotWriteCanonically() {
        for members: [String: Any] in [
            ["_id": "x"], ["a": 2.0], ["a": Double.nan], ["a": 1 << 60], ["a": NSNumber(value: 1)], ["a": Date()],
            ["a": [["b": 3.0]]], ["a": Float(0.5)],
        ] {
            #expect(PlainJSONSerializer.serialized(members) == nil, "\(members)")
        }
        #expect(PlainJSONSerializer.serialized(["a": ["_b": 1]]) != nil)
    }
}
