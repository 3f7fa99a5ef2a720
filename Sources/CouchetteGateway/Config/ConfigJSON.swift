import CouchetteCore

// MARK: - ConfigJSON

/// Parses configuration text with ``JSONValue``'s strict parser and reports errors by line and column, as
/// people editing a config file need.
enum ConfigJSON {
    /// Parses one JSON document (back-quoted strings already converted).
    ///
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` with an empty field and a problem like
    ///   `invalid JSON at line 3, column 13: Invalid literal`.
    static func parse(_ text: String) throws(GatewayError) -> JSONValue {
        do {
            return try JSONValue(parsing: text)
        } catch {
            let offset = error.byteOffset ?? 0
            let (line, column) = lineAndColumn(of: offset, in: Array(text.utf8))
            let problem = error.message.replacingOccurrences(of: " at offset \(offset)", with: "")
            throw .invalidConfig(field: "", problem: "invalid JSON at line \(line), column \(column): \(problem)")
        }
    }

    /// The 1-based line and column (in characters) of a byte offset.
    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let offset = min(offset, bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<offset where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            lineStart = position + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
        return (line, column)
    }
}

extension JSONValue {
    /// The kind of value with an article, for config error messages: `"a number"`, `"an object"`, `"null"`.
    var configKindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
