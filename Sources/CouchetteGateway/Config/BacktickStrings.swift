// MARK: - BacktickStrings

/// Sync Gateway's back-quoted string extension of JSON: text between backquotes becomes a JSON string literal.
///
/// Configuration files hold multi-line JavaScript sync functions this way (spec: gateway-rest-api.md §17):
///
/// ```swift
/// BacktickStrings.convert("{\"sync\": `function(doc) {\n  channel(\"a\");\n}`}")
/// // {"sync": "function(doc) {\n  channel(\"a\");\n}"} followed by two newlines
/// ```
///
/// The scan follows JSON tokens, so backquotes inside ordinary `"…"` strings are left alone. The line breaks
/// removed from a back-quoted string are re-emitted as whitespace right after the literal, so that line numbers
/// in JSON error messages still match the original file.
enum BacktickStrings {
    // MARK: - Conversion

    /// Replaces every back-quoted string with an equivalent JSON string literal.
    ///
    /// - Parameter text: The configuration file text.
    /// - Returns: Plain JSON text.
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` for a backquote that is never closed.
    static func convert(_ text: String) throws(GatewayError) -> String {
        let input = Array(text.utf8)
        guard input.contains(UInt8(ascii: "`")) else { return text }

        var output: [UInt8] = []
        output.reserveCapacity(input.count + 64)
        var index = 0
        var inString = false

        while index < input.count {
            let byte = input[index]
            if inString {
                output.append(byte)
                if byte == UInt8(ascii: "\\"), index + 1 < input.count {
                    output.append(input[index + 1])
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                output.append(byte)
                index += 1
            } else if byte == UInt8(ascii: "`") {
                guard let end = input[(index + 1)...].firstIndex(of: UInt8(ascii: "`")) else {
                    let (line, column) = ConfigJSON.lineAndColumn(of: index, in: input)
                    throw .invalidConfig(
                        field: "",
                        problem: "invalid JSON at line \(line), column \(column): unterminated backquoted string"
                    )
                }
                let content = input[(index + 1)..<end]
                appendLiteral(content, to: &output)
                let newlines = content.count(where: { $0 == UInt8(ascii: "\n") })
                output.append(contentsOf: repeatElement(UInt8(ascii: "\n"), count: newlines))
                index = end + 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: - Escaping

    /// Appends `content` as a quoted JSON string, escaping `\`, `"` and control characters.
    private static func appendLiteral(_ content: ArraySlice<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in content {
            switch byte {
            case UInt8(ascii: "\\"): output.append(contentsOf: Array(#"\\"#.utf8))
            case UInt8(ascii: "\""): output.append(contentsOf: Array(#"\""#.utf8))
            case 0x0A: output.append(contentsOf: Array(#"\n"#.utf8))
            case 0x0D: output.append(contentsOf: Array(#"\r"#.utf8))
            case 0x09: output.append(contentsOf: Array(#"\t"#.utf8))
            case 0x08: output.append(contentsOf: Array(#"\b"#.utf8))
            case 0x0C: output.append(contentsOf: Array(#"\f"#.utf8))
            case 0x00..<0x20:
                let hex = String(byte, radix: 16)
                output.append(contentsOf: Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8))
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
