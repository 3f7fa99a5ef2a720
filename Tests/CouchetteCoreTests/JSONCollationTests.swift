import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteCore

/// CouchDB's collation of JSON keys, as byte strings (`JSONCollation`).
@Suite(.timeLimit(.minutes(5))) struct JSONCollationTests {
    static func parse(_ text: String) -> JSONValue { try! JSONValue(parsing: Array(text.utf8)) }

    /// Every adjacent pair of `values` sorts strictly in order.
    static func expectAscending(_ values: [JSONValue], sourceLocation: SourceLocation = #_sourceLocation) {
        for (left, right) in zip(values, values.dropFirst()) {
            #expect(
                JSONCollation.compare(left, right) == .orderedAscending,
                "\(left.serializedString()) < \(right.serializedString())", sourceLocation: sourceLocation)
        }
    }

    @Test func couchDBsExampleOrder() {
        // From CouchDB's "Views Collation" documentation (objects with keys in sorted order).
        let keys = [
            "null", "false", "true", "-1e10", "-2", "0", "1", "2", "3.0", "4", "1e10",
            #""a""#, #""A""#, #""aa""#, #""b""#, #""B""#, #""ba""#, #""bb""#,
            #"["a"]"#, #"["b"]"#, #"["b","c"]"#, #"["b","c","a"]"#, #"["b","d"]"#, #"["b","d","e"]"#,
            #"{"a":1}"#, #"{"a":2}"#, #"{"b":1}"#, #"{"b":2}"#, #"{"b":2,"c":2}"#,
        ]
        Self.expectAscending(keys.map(Self.parse))
    }

    @Test func asciiCharactersFollowICU() {
        // CouchDB's list of special characters in ICU order, then digits and letters.
        let ordered = [" ", "`", "^", "_", "-", ",", ";", ":", "!", "?", ".", "'", "\"", "(", ")", "[", "]", "{", "}",
            "@", "*", "/", "\\", "&", "#", "%", "+", "<", "=", ">", "|", "~", "$", "0", "9", "a", "A", "b", "B", "z", "Z"]
        Self.expectAscending(ordered.map(JSONValue.string))
    }

    @Test func stringsCompareLettersFirstThenAccentsThenCase() {
        let ordered = ["a", "A", "á", "Á", "ab", "Ab", "b", "e", "é", "f", "resume", "Resume", "résumé", "Résumé", "resumes"]
        Self.expectAscending(ordered.map(JSONValue.string))
        // Letters decide before case: "Aa" < "ab" (a single-level comparison would say otherwise).
        #expect(JSONCollation.compare("Aa", "ab") == .orderedAscending)
        // Only identical strings are equal; composed and decomposed forms are told apart, next to each other.
        #expect(JSONCollation.compare("é", "e\u{301}") != .orderedSame)
        #expect(JSONCollation.compare("é", "é") == .orderedSame)
        #expect(JSONCollation.compare("", "a") == .orderedAscending)
        #expect(JSONCollation.compare("a\u{0}", "a") == .orderedDescending)
    }

    @Test func numbersCompareByValueWhateverTheirForm() {
        Self.expectAscending([.double(-.greatestFiniteMagnitude), .int(-5), .double(-0.5), .int(0), .double(1e-300),
            .int(1), .double(1.5), .int(Int64.max)])
        #expect(JSONCollation.compare(.int(3), .double(3.0)) == .orderedSame)
        #expect(JSONCollation.compare(.double(-0.0), .int(0)) == .orderedSame)
    }

    @Test func prefixBoundsCoverKeysStartingWithThePrefix() {
        let bound = JSONCollation.prefixUpperBound("Gro", level: 1)
        for inside in ["Gro", "groceries", "Groceries", "GROW"] {
            #expect(JSONCollation.sortKey(.string(inside)).lexicographicallyPrecedes(bound), "\(inside)")
        }
        for outside in ["grp", "Gs", "h"] {
            #expect(!JSONCollation.sortKey(.string(outside)).lexicographicallyPrecedes(bound), "\(outside)")
        }
        let arrayBound = JSONCollation.prefixUpperBound(Self.parse("[1]"), level: 1)
        #expect(JSONCollation.sortKey(Self.parse(#"[1,"x"]"#)).lexicographicallyPrecedes(arrayBound))
        #expect(!JSONCollation.sortKey(Self.parse("[2]")).lexicographicallyPrecedes(arrayBound))
        let lastElement = JSONCollation.prefixUpperBound(Self.parse(#"[1,"x"]"#), level: 2)
        #expect(JSONCollation.sortKey(Self.parse(#"[1,"xtc"]"#)).lexicographicallyPrecedes(lastElement))
        #expect(!JSONCollation.sortKey(Self.parse(#"[1,"y"]"#)).lexicographicallyPrecedes(lastElement))
    }

    /// Random keys of nulls, Booleans, integers, [a-z0-9] strings and nested arrays sort as a straightforward
    /// comparison of CouchDB's rules says (for such strings ICU order is code point order).
    @Test func randomKeysSortLikeAReferenceComparison() {
        var generator = SplitMix64(state: 0xC011A7E)
        for _ in 0..<3_000 {
            let left = Self.randomValue(&generator, depth: 0)
            let right = Self.randomValue(&generator, depth: 0)
            #expect(
                JSONCollation.compare(left, right) == Self.reference(left, right),
                "\(left.serializedString()) vs \(right.serializedString())")
        }
    }

    static func randomValue(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 6 : 5), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -3...3, using: &generator))
        case 3: return .double(Double(Int.random(in: -30...30, using: &generator)) / 4)
        case 4:
            let letters = Array("ab0z9")
            return .string(String((0..<Int.random(in: 0...3, using: &generator)).map { _ in letters.randomElement(using: &generator)! }))
        default:
            return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in randomValue(&generator, depth: depth + 1) })
        }
    }

    static func reference(_ left: JSONValue, _ right: JSONValue) -> ComparisonResult {
        func rank(_ value: JSONValue) -> Int {
            switch value {
            case .null: 0
            case .bool(false): 1
            case .bool(true): 2
            case .int, .double: 3
            case .string: 4
            case .array: 5
            case .object: 6
            }
        }
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        }
        if rank(left) != rank(right) { return order(rank(left), rank(right)) }
        switch (left, right) {
        case (.string(let a), .string(let b)):
            if a == b { return .orderedSame }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? .orderedAscending : .orderedDescending
        case (.array(let a), .array(let b)):
            for (x, y) in zip(a, b) {
                let result = reference(x, y)
                if result != .orderedSame { return result }
            }
            return order(a.count, b.count)
        default:
            if let a = left.doubleValue, let b = right.doubleValue { return order(a, b) }
            return .orderedSame
        }
    }
}
