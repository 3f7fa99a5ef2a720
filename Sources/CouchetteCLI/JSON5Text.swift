import CouchetteCore

// MARK: - JSON5Text

/// JSON in cblite's readable JSON5 style: indented, keys sorted and unquoted when they are identifiers
/// (`name: "Groceries"`), strings and numbers as in JSON. What `cat --json5` prints; JSON5 parsers read it back.
enum JSON5Text {
    static func render(_ value: JSONValue, indent: Int = 0) -> String {
        let padding = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch value {
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            let lines = members.keys.sorted().map { key in
                "\(padding)\(Self.key(key)): \(render(members[key]!, indent: indent + 1))"
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n\(closing)}"
        case .array(let items):
            guard !items.isEmpty else { return "[]" }
            return "[\n" + items.map { padding + render($0, indent: indent + 1) }.joined(separator: ",\n") + "\n\(closing)]"
        default:
            return value.serializedString()
        }
    }

    /// A key as an identifier when it is one (and no reserved word), else a JSON string.
    private static func key(_ key: String) -> String {
        let reserved: Set<String> = ["true", "false", "null"]
        guard let first = key.unicodeScalars.first, first == "_" || first == "$" || (first.isASCII && first.properties.isAlphabetic),
            key.unicodeScalars.allSatisfy({ $0 == "_" || $0 == "$" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }),
            !reserved.contains(key)
        else { return JSONValue.string(key).serializedString() }
        return key
    }
}
