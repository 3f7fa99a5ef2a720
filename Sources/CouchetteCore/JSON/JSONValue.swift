/// A JSON document or fragment, held as a value.
///
/// Integers are kept as `Int64` and never pass through `Double`, so IDs and counters beyond 2^53 survive a
/// round trip; a literal that does not fit in 64 bits is rejected by the parser rather than rounded. Objects
/// are unordered (as in JSON); serialization writes their keys sorted by code point, which makes the output
/// deterministic.
///
/// ```swift
/// let list: JSONValue = ["type": "task-list", "name": "Groceries", "owner": "user1"]
/// let parsed = try JSONValue(parsing: #"{"name":"Groceries","count":3}"#)
/// parsed["count"]?.intValue            // 3
/// String(decoding: list.serialized(), as: UTF8.self)   // {"name":"Groceries","owner":"user1","type":"task-list"}
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])
}

// MARK: - Accessors

extension JSONValue {
    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        get {
            guard case .object(let members) = self else { return nil }
            return members[key]
        }
        set {
            guard case .object(var members) = self else { return }
            members[key] = newValue
            self = .object(members)
        }
    }

    /// The element at `index` when this is an array and the index is in range.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The integer, when this is an integer or a double with an exact integral value in range.
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The JSON type's name, for error messages: `"null"`, `"a Boolean"`, `"a number"`, …
    public var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: - Literals

// Not `ExpressibleByNilLiteral`: with it, `cond ? nil : json` silently means `.null`, not `Optional.none`.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: - Description

extension JSONValue: CustomStringConvertible {
    /// The compact serialization.
    public var description: String { serializedString() }
}
