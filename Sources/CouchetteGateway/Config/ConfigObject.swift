import CouchetteCore

// MARK: - ConfigObject

/// A JSON object of the configuration file, read field by field with errors that name the field's path.
///
/// Field names match case-insensitively, as Go's `encoding/json` (which Sync Gateway 1.x uses) does: an exact match
/// wins, otherwise the last case-insensitive match. A JSON `null` reads as an absent field.
///
/// ```swift
/// let database = try ConfigObject(value, path: "databases.todo")
/// let limit = try database.integer("revs_limit")  // throws "databases.todo.revs_limit: expected an integer"
/// ```
struct ConfigObject {
    // MARK: - Properties

    /// The dotted path of this object, empty for the top level.
    let path: String

    /// The members, sorted by name (JSON objects are unordered).
    let members: [(key: String, value: JSONValue)]

    // MARK: - Initialiser

    /// Wraps a value that must be an object.
    ///
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` naming `path` when `value` is not an object.
    init(_ value: JSONValue, path: String) throws(GatewayError) {
        guard case .object(let members) = value else {
            throw .invalidConfig(field: path, problem: "expected an object, found \(value.configKindDescription)")
        }
        self.path = path
        self.members = members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }

    // MARK: - Lookup

    /// The dotted path of a member, e.g. `databases.todo.revs_limit`.
    func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The value of a field, matched exactly first and then case-insensitively; `nil` if absent or `null`.
    func value(_ key: String) -> JSONValue? {
        let match =
            members.last(where: { $0.key == key })
            ?? members.last(where: { $0.key.lowercased() == key.lowercased() })
        guard let match, match.value != .null else { return nil }
        return match.value
    }

    /// The members whose names match none of `knownKeys` (case-insensitively), in name order.
    func unknownKeys(known knownKeys: Set<String>) -> [String] {
        let known = Set(knownKeys.map { $0.lowercased() })
        return members.map(\.key).filter { !known.contains($0.lowercased()) }
    }

    // MARK: - Typed fields

    /// A string field.
    func string(_ key: String) throws(GatewayError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw mismatch(key, expected: "a string", found: value) }
        return string
    }

    /// An integer field; fractions and numbers out of range are rejected.
    func integer(_ key: String) throws(GatewayError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .int(let integer) = value else { throw mismatch(key, expected: "an integer", found: value) }
        guard let result = Int(exactly: integer) else { throw invalid(key, "integer out of range") }
        return result
    }

    /// A number field, integer or not.
    func number(_ key: String) throws(GatewayError) -> Double? {
        guard let value = value(key) else { return nil }
        switch value {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        default: throw mismatch(key, expected: "a number", found: value)
        }
    }

    /// A boolean field.
    func bool(_ key: String) throws(GatewayError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let bool) = value else { throw mismatch(key, expected: "a boolean", found: value) }
        return bool
    }

    /// An array-of-strings field; the element at fault is named, e.g. `log[2]`.
    func stringArray(_ key: String) throws(GatewayError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else {
            throw mismatch(key, expected: "an array of strings", found: value)
        }
        var strings: [String] = []
        for (offset, element) in elements.enumerated() {
            guard case .string(let string) = element else {
                throw .invalidConfig(
                    field: "\(fieldPath(key))[\(offset)]",
                    problem: "expected a string, found \(element.configKindDescription)"
                )
            }
            strings.append(string)
        }
        return strings
    }

    /// An object field.
    func object(_ key: String) throws(GatewayError) -> ConfigObject? {
        guard let value = value(key) else { return nil }
        return try ConfigObject(value, path: fieldPath(key))
    }

    /// An object field used as a map (e.g. `databases`, `users`): its members as named child objects, in name order.
    /// A later duplicate name replaces an earlier one.
    func objectMap(_ key: String) throws(GatewayError) -> [(name: String, object: ConfigObject)] {
        guard let map = try object(key) else { return [] }
        var result: [(name: String, object: ConfigObject)] = []
        for member in map.members {
            let child = try ConfigObject(
                member.value == .null ? .object([:]) : member.value, path: map.fieldPath(member.key))
            if let existing = result.firstIndex(where: { $0.name == member.key }) {
                result.remove(at: existing)
            }
            result.append((name: member.key, object: child))
        }
        return result
    }

    // MARK: - Errors

    /// A type-mismatch error naming the field: `<path>: expected a string, found a number`.
    func mismatch(_ key: String, expected: String, found value: JSONValue) -> GatewayError {
        .invalidConfig(field: fieldPath(key), problem: "expected \(expected), found \(value.configKindDescription)")
    }

    /// An error about a field's value, naming the field.
    func invalid(_ key: String, _ problem: String) -> GatewayError {
        .invalidConfig(field: fieldPath(key), problem: problem)
    }
}
