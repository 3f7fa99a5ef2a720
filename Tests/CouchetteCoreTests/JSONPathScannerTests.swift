import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteCore

/// The path scanner finds exactly what parsing the whole text and then following the path finds.
@Suite(.timeLimit(.minutes(5))) struct JSONPathScannerTests {
    static func scan(_ text: String, _ path: [JSONPathScanner.Step]) -> JSONValue? {
        Array(text.utf8).withUnsafeBytes { JSONPathScanner.value(in: $0, at: path) }
    }

    /// Follows the path in the parsed value (the reference).
    static func follow(_ value: JSONValue, _ path: [JSONPathScanner.Step]) -> JSONValue? {
        var current: JSONValue? = value
        for step in path {
            switch (step, current) {
            case (.key(let key), .object(let members)?): current = members[String(decoding: key, as: UTF8.self)]
            case (.index(let index), .array(let elements)?):
                let position = index >= 0 ? index : elements.count + index
                current = elements.indices.contains(position) ? elements[position] : nil
            default: return nil
            }
        }
        return current
    }

    @Test func findsMembersAndElements() {
        let text = #" { "a" : 1, "b": {"c": [10, {"d": "x\"y"}, [ ] ], "e": null}, "f": true, "g": "{[\\", "h": -2.5e3 } "#
        #expect(Self.scan(text, [.init("a")]) == 1)
        #expect(Self.scan(text, [.init("b"), .init("c"), .index(1), .init("d")]) == "x\"y")
        #expect(Self.scan(text, [.init("b"), .init("c"), .index(-1)]) == [])
        #expect(Self.scan(text, [.init("b"), .init("c"), .index(-3)]) == 10)
        #expect(Self.scan(text, [.init("b"), .init("e")]) == .null)
        #expect(Self.scan(text, [.init("f")]) == true)
        #expect(Self.scan(text, [.init("g")]) == "{[\\")
        #expect(Self.scan(text, [.init("h")]) == -2500.0)
        #expect(Self.scan(text, [])?["b"]?["e"] == .null)
        // Missing: absent members, positions past either end, steps into scalars.
        #expect(Self.scan(text, [.init("z")]) == nil)
        #expect(Self.scan(text, [.init("b"), .init("c"), .index(3)]) == nil)
        #expect(Self.scan(text, [.init("b"), .init("c"), .index(-4)]) == nil)
        #expect(Self.scan(text, [.init("a"), .init("x")]) == nil)
        #expect(Self.scan(text, [.index(0)]) == nil)
        // Escaped member names match their decoded text.
        #expect(Self.scan(#"{"\u0061b": 7, "é": 8}"#, [.init("ab")]) == 7)
        #expect(Self.scan(#"{"\u0061b": 7, "é": 8}"#, [.init("é")]) == 8)
    }

    @Test func malformedTextGivesNil() {
        for text in ["", "{", #"{"a""#, #"{"a":"#, #"{"a" 1}"#, "[1,", #"{"a":"unterminated"#, #"{"b":[1,2}"#] {
            #expect(Self.scan(text, [.init("a")]) == nil, "\(text)")
        }
        #expect(Self.scan("[1,", [.index(5)]) == nil)
    }

    @Test func randomDocumentsAndPathsAgreeWithParsing() throws {
        var generator = SplitMix64(state: 0x5CA77E2)
        for round in 0..<2_000 {
            let document = RandomJSON.value(&generator, depth: 0, names: Self.names)
            let text = round.isMultiple(of: 2) ? document.serializedString() : Self.spaced(document, &generator)
            let parsed = try JSONValue(parsing: Array(text.utf8))
            for _ in 0..<8 {
                let path = Self.randomPath(&generator)
                #expect(Self.scan(text, path) == Self.follow(parsed, path), "\(text) \(path)")
            }
        }
    }

    static let names = ["a", "b", "é", "q\"", "k\\", ""]

    static func randomPath(_ generator: inout SplitMix64) -> [JSONPathScanner.Step] {
        (0..<Int.random(in: 0...3, using: &generator)).map { _ in
            Bool.random(using: &generator)
                ? .init(names.randomElement(using: &generator)!) : .index(Int.random(in: -3...3, using: &generator))
        }
    }

    /// The value as JSON text with whitespace around every token.
    static func spaced(_ value: JSONValue, _ generator: inout SplitMix64) -> String {
        let space = [" ", "\n", "\t", "", "\r\n "].randomElement(using: &generator)!
        switch value {
        case .array(let elements):
            return "[" + space + elements.map { spaced($0, &generator) }.joined(separator: space + "," + space) + space + "]"
        case .object(let members):
            let pairs = members.keys.sorted().map { key in
                JSONValue.string(key).serializedString() + space + ":" + space + spaced(members[key]!, &generator)
            }
            return "{" + space + pairs.joined(separator: "," + space) + space + "}"
        default:
            return space + value.serializedString() + space
        }
    }
}
