import Testing

@testable import CouchetteGateway

// MARK: - BacktickStringsTests

@Suite("Back-quoted strings in the configuration file", .timeLimit(.minutes(5)))
struct BacktickStringsTests {
    @Test("A multi-line back-quoted string with quotes, backslashes and tabs becomes a JSON string")
    func multiLineWithSpecialCharacters() throws {
        let source = "function(doc) {\n\tif (doc.a == \"x\\y\") {\n    throw({forbidden: 'it\\'s \"bad\"'});\n  }\r\n}"
        let config = try GatewayConfig(json: "{\"databases\": {\"db\": {\"sync\": `\(source)`}}}")
        #expect(config.databases["db"]?.sync == source)
    }

    @Test("Control characters are escaped")
    func controlCharacters() throws {
        let source = "a\u{01}b\u{1F}c\u{08}d\u{0C}"
        let converted = try BacktickStrings.convert("`\(source)`")
        #expect(converted == #""a\u0001b\u001fc\bd\f""#)
        #expect(try ConfigJSON.parse(converted) == .string(source))
    }

    @Test("Backquotes inside ordinary JSON strings are left alone")
    func backquoteInsideString() throws {
        let json = #"{"log": ["a`b", "c\"`d`"], "databases": {"db": {"sync": `x`}}}"#
        let converted = try BacktickStrings.convert(json)
        #expect(converted == #"{"log": ["a`b", "c\"`d`"], "databases": {"db": {"sync": "x"}}}"#)
        let config = try GatewayConfig(json: json)
        #expect(config.log == ["a`b", "c\"`d`"])
        #expect(config.databases["db"]?.sync == "x")
    }

    @Test("Text without backquotes is unchanged")
    func noBackquotes() throws {
        let json = #"{"a": "b\\", "c": [1, 2]}"#
        #expect(try BacktickStrings.convert(json) == json)
    }

    @Test("An empty back-quoted string is an empty JSON string")
    func emptyString() throws {
        #expect(try BacktickStrings.convert("{\"s\": ``}") == "{\"s\": \"\"}")
    }

    @Test("Line numbers after a multi-line back-quoted string still match the original file")
    func lineNumbersPreserved() throws {
        let json = "{\n  \"databases\": {\"db\": {\"sync\": `line 1\nline 2\nline 3`,\n  \"revs_limit\": x}}\n}"
        let error = try #require(throws: GatewayError.self) { try GatewayConfig(json: json) }
        #expect(error.reason.contains("line 5,"), "\(error.reason)")
    }

    @Test("An unterminated backquote is reported with its position")
    func unterminated() throws {
        let error = try #require(throws: GatewayError.self) {
            try GatewayConfig(json: "{\n  \"sync\": `function() {}\n}")
        }
        #expect(error.reason == "invalid JSON at line 2, column 11: unterminated backquoted string")
    }
}
