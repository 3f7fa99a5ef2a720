import CouchetteCore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct JSONValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #" {"a": [1, -2.5, true, false, null, "x"], "b": {"c": {}}, "d": []} "#)
        #expect(value["a"] == [1, -2.5, true, false, .null, "x"])
        #expect(value["b"]?["c"] == .object([:]))
        #expect(value["d"] == .array([]))
    }

    @Test func keepsIntegersBeyondTwoToThe53Exactly() throws {
        let text = #"{"big":9007199254740993,"max":9223372036854775807,"min":-9223372036854775808}"#
        let value = try JSONValue(parsing: text)
        #expect(value["big"] == .int(9_007_199_254_740_993))
        #expect(value["max"] == .int(Int64.max))
        #expect(value["min"] == .int(Int64.min))
        #expect(value.serializedString() == text)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "[123456789012345678901234567890]"])
    func rejectsIntegersBeyond64BitsInsteadOfRounding(text: String) {
        #expect {
            try JSONValue(parsing: text)
        } throws: { ($0 as? CoreError)?.code == .numberOutOfRange }
    }

    @Test func decodesUnicodeEscapesAndSurrogatePairs() throws {
        let value = try JSONValue(parsing: #""caf\u00e9 \ud83d\ude00 \n\t\"\\\/""#)
        #expect(value == .string("café 😀 \n\t\"\\/"))
    }

    @Test(arguments: [#""\ud83d""#, #""\ude00 x""#, #""\ud83d\u0041""#, #""\uZZZZ""#, #""\x""#])
    func rejectsBadEscapes(text: String) {
        #expect(throws: CoreError.self) { try JSONValue(parsing: text) }
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", ".5", "-", "1e", "tru", "nul", "[1 2]", "{} x",
        "\"abc", "\"a\u{01}\"", "{a:1}", "'x'", "NaN", "Infinity", "1e999",
    ])
    func rejectsMalformedJSONWithAClearError(text: String) {
        #expect {
            try JSONValue(parsing: text)
        } throws: { error in
            guard let error = error as? CoreError else { return false }
            return error.status == 400 && !error.message.isEmpty
        }
    }

    @Test func errorNamesTheOffset() {
        #expect {
            try JSONValue(parsing: #"{"a": x}"#)
        } throws: { ($0 as? CoreError)?.message.contains("offset 6") == true }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xFF, 0xFE, 0x22]
        #expect(throws: CoreError.self) { try JSONValue(parsing: bytes) }
    }

    @Test func boundsNesting() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect {
            try JSONValue(parsing: deep)
        } throws: { ($0 as? CoreError)?.code == .nestingTooDeep }
        let allowed = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        _ = try JSONValue(parsing: allowed)
        #expect(throws: CoreError.self) { try JSONValue(parsing: allowed, maximumDepth: 10) }
    }

    @Test func serializesCanonicallyWithSortedKeysAndNoWhitespace() throws {
        let value: JSONValue = ["zeta": 1, "alpha": ["b": 2, "a": [true, .null]], "é": "x", "Z": 0.5]
        #expect(value.serializedString() == #"{"Z":0.5,"alpha":{"a":[true,null],"b":2},"zeta":1,"é":"x"}"#)
        #expect(value.canonicalBytes == Array(value.serializedString().utf8))
    }

    @Test func escapesControlCharactersQuotesAndBackslashes() throws {
        let value = JSONValue.string("a\"b\\c\n\u{01}\u{1F}é")
        #expect(value.serializedString() == #""a\"b\\c\n\u0001\u001fé""#)
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test func doublesRoundTripInShortestForm() throws {
        for number in [0.1, -2.5, 1e-7, 1.7976931348623157e308, Double.leastNonzeroMagnitude, 123456.789] {
            let text = JSONValue.double(number).serializedString()
            #expect(try JSONValue(parsing: text) == .double(number))
        }
        #expect(JSONValue.double(0.1).serializedString() == "0.1")
        #expect(JSONValue.double(.nan).serializedString() == "null")
    }

    static let goNumberVectors: [(JSONValue, String)] = [
        (JSONValue.double(2.0), "2"), (.double(1e20), "100000000000000000000"), (.double(1e21), "1e+21"),
        (.double(1e-7), "1e-7"), (.double(-0.0), "-0"), (.double(0.0), "0"), (.double(0.1), "0.1"),
        (.double(1e-6), "0.000001"), (.double(1.5e-7), "1.5e-7"), (.double(123456.789), "123456.789"),
        (.double(-2.5), "-2.5"), (.double(1.2e22), "1.2e+22"), (.double(1e-10), "1e-10"),
        (.double(5e-324), "5e-324"), (.double(1.7976931348623157e308), "1.7976931348623157e+308"),
        (.double(12345678.0), "12345678"), (.double(9007199254740993), "9007199254740992"),
        (.int(9_007_199_254_740_992), "9007199254740992"), (.int(9_007_199_254_740_993), "9007199254740992"),
        (.int(-9_007_199_254_740_993), "-9007199254740992"), (.int(123_456_789_012_345_678), "123456789012345680"),
        (.int(.max), "9223372036854776000"), (.int(.min), "-9223372036854776000"), (.int(42), "42"),
    ]

    /// Go's `encoding/json` form (ECMAScript's number-to-string cut-offs, Go's `-0`), as Sync Gateway writes the
    /// float64 it read every number into.
    @Test(arguments: goNumberVectors)
    func canonicalNumbersAreGos(value: JSONValue, text: String) {
        #expect(String(decoding: value.canonicalBytes, as: UTF8.self) == text)
        #expect(String(decoding: JSONValue.array([value]).canonicalBytes, as: UTF8.self) == "[\(text)]")
    }

    static let storedNumberVectors: [(JSONValue, String)] = [
        (JSONValue.double(2.0), "2.0"), (.double(1e20), "100000000000000000000.0"), (.double(1e21), "1e+21"),
        (.double(1e-7), "1e-7"), (.double(-0.0), "-0.0"), (.double(0.5), "0.5"),
        (.int(9_007_199_254_740_993), "9007199254740993"), (.int(.max), "9223372036854775807"),
    ]

    /// Stored and sent JSON keeps what the canonical form may round: integers exactly, and `.0` on integral doubles
    /// so that they read back as doubles.
    @Test(arguments: storedNumberVectors)
    func storedNumbersReadBackUnchanged(value: JSONValue, text: String) throws {
        #expect(value.serializedString() == text)
        let reread = try JSONValue(parsing: text)
        #expect(reread == value)
        if case .double(let number) = value, case .double(let back) = reread { #expect(number.sign == back.sign) }
    }

    @Test func prettyPrintingParsesBackToTheSameValue() throws {
        let value: JSONValue = ["list": [1, ["k": "v"]], "empty": [:], "none": []]
        let pretty = value.serializedString(prettyPrinted: true)
        #expect(pretty.contains("\n  \"empty\": {}"))
        #expect(try JSONValue(parsing: pretty) == value)
    }

    @Test func roundTripsThroughCodable() throws {
        struct Task: Codable, Equatable {
            var title: String
            var complete: Bool
            var count: Int64
            var tags: [String]
        }
        let task = Task(title: "Milk", complete: false, count: 9_007_199_254_740_993, tags: ["a"])
        let json = try JSONValue(encoding: task)
        #expect(json == ["title": "Milk", "complete": false, "count": 9_007_199_254_740_993, "tags": ["a"]])
        #expect(try json.decode(as: Task.self) == task)

        let value: JSONValue = ["n": .null, "b": true, "i": 3, "d": 2.5, "s": "x", "a": [1], "o": ["k": "v"]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func bridgesFoundationObjects() throws {
        let object: [String: Any] = ["s": "x", "i": 3, "d": 2.5, "b": true, "n": NSNull(), "a": [1, "y"]]
        let value = try JSONValue(foundationObject: object)
        #expect(value == ["s": "x", "i": 3, "d": 2.5, "b": true, "n": .null, "a": [1, "y"]])
        let back = try JSONValue(foundationObject: value.foundationObject)
        #expect(back == value)
        #expect(throws: CoreError.self) { try JSONValue(foundationObject: ["date": Date()]) }
        #expect(throws: CoreError.self) { try JSONValue(foundationObject: ["nested": ["date": Date()] as [String: Any]]) }
        // Exact Swift types and the others (optionals, Foundation numbers, typed collections) convert alike.
        let mixed: [String: Any] = [
            "o": ["j": JSONValue.int(1), "none": nil] as [String: Any?], "t": ["a", "b"],
            "n": NSNumber(value: 7), "f": Float(1.5), "i64": Int64(9),
        ]
        #expect(
            try JSONValue(foundationObject: mixed)
                == ["o": ["j": 1, "none": .null], "t": ["a", "b"], "n": 7, "f": 1.5, "i64": 9])
    }

    @Test func accessorsAndSubscripts() {
        var value: JSONValue = ["n": 3, "s": "x", "a": [1, 2]]
        #expect(value["n"]?.intValue == 3)
        #expect(value["n"]?.doubleValue == 3)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["a"]?[1] == 2)
        #expect(value["a"]?[5] == nil)
        #expect(value["missing"] == nil)
        value["s"] = "y"
        #expect(value["s"] == "y")
        #expect(JSONValue.double(2.0).intValue == 2)
        #expect(JSONValue.double(2.5).intValue == nil)
    }

    @Test func parsesFromDataAndSlices() throws {
        let data = Data(#"{"k":[1]}"#.utf8)
        #expect(try JSONValue(parsing: data) == ["k": [1]])
        let bytes = Array("xx[true]".utf8)
        #expect(try JSONValue(parsing: bytes[2...]) == [true])
    }
}

@Suite(.timeLimit(.minutes(5))) struct JSONErrorOffsetTests {
    @Test func everyParseErrorCarriesItsByteOffset() {
        for (text, offset) in [(#"{"a": x}"#, 6), ("[1,2", 4), ("123456789012345678901234567890", 0), ("[[[", 2)] {
            do {
                _ = try JSONValue(parsing: text, maximumDepth: 2)
                Issue.record("expected an error for \(text)")
            } catch {
                #expect(error.byteOffset == offset, "\(text)")
            }
        }
    }
}
