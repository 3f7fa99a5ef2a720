import Foundation

/// Serializes Foundation property values straight to JSON text, without building ``JSONValue``s first: what a new
/// document's save needs, when its values are plain.
///
/// Plain means: `String`, `Int`, `Int64`, `Bool`, a finite `Double` with a fraction, `NSNull`, and `[String: Any]`
/// and `[Any]` of those, with no top-level name starting with `_`. The text is byte for byte what
/// ``JSONValue/serialized(prettyPrinted:)`` writes for the same values, and its canonical form
/// (``JSONValue/canonicalBytes``) is the same text, so it is a revision digest's input as it is. Anything else (a
/// date, a blob, a mutable container, an `NSNumber`, an integral double, an integer beyond 2^53) gives nil, for
/// the caller to convert the values the general way.
package enum PlainJSONSerializer {
    /// The object's text, or nil when a value is not plain.
    package static func serialized(_ members: [String: Any]) -> [UInt8]? {
        var serializer = JSONSerializer(reservingCapacity: 64 * members.count + 16)
        guard members.keys.allSatisfy({ $0.utf8.first != UInt8(ascii: "_") }),
            write(members, into: &serializer, depth: 0)
        else { return nil }
        return serializer.output
    }

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let int64Type = ObjectIdentifier(Int64.self)
    private static let boolType = ObjectIdentifier(Bool.self)
    private static let doubleType = ObjectIdentifier(Double.self)
    private static let nullType = ObjectIdentifier(NSNull.self)
    private static let dictionaryType = ObjectIdentifier([String: Any].self)
    private static let arrayType = ObjectIdentifier([Any].self)
    private static let stringDictionaryType = ObjectIdentifier([String: String].self)
    private static let stringArrayType = ObjectIdentifier([String].self)
    private static let intArrayType = ObjectIdentifier([Int].self)

    /// How deep containers may nest (as the parser allows).
    private static let maximumDepth = 512

    private static func write(_ value: Any, into serializer: inout JSONSerializer, depth: Int) -> Bool {
        switch ObjectIdentifier(type(of: value)) {
        case stringType: serializer.writeString(value as! String)
        case intType: return writeInteger(Int64(value as! Int), into: &serializer)
        case int64Type: return writeInteger(value as! Int64, into: &serializer)
        case boolType: serializer.append((value as! Bool) ? "true" : "false")
        case nullType: serializer.append("null")
        case doubleType:
            let number = value as! Double
            guard number.isFinite, number.rounded(.towardZero) != number else { return false }
            serializer.writeDouble(number)
        case dictionaryType: return write(value as! [String: Any], into: &serializer, depth: depth + 1)
        case arrayType: return write(value as! [Any], into: &serializer, depth: depth + 1)
        // Collections of one plain type, as Swift literals make them.
        case stringDictionaryType: return write(value as! [String: String], into: &serializer, depth: depth + 1)
        case stringArrayType: return write(value as! [String], into: &serializer, depth: depth + 1)
        case intArrayType: return write(value as! [Int], into: &serializer, depth: depth + 1)
        default:
            // Other collections (a conditional cast boxes every element, so it comes last).
            if let members = value as? [String: Any] { return write(members, into: &serializer, depth: depth + 1) }
            if let elements = value as? [Any] { return write(elements, into: &serializer, depth: depth + 1) }
            return false
        }
        return true
    }

    private static func write(_ elements: [some Any], into serializer: inout JSONSerializer, depth: Int) -> Bool {
        guard depth < maximumDepth else { return false }
        serializer.output.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { serializer.output.append(UInt8(ascii: ",")) }
            guard write(element, into: &serializer, depth: depth + 1) else { return false }
        }
        serializer.output.append(UInt8(ascii: "]"))
        return true
    }

    private static func write(_ members: [String: some Any], into serializer: inout JSONSerializer, depth: Int) -> Bool {
        guard depth < maximumDepth else { return false }
        serializer.output.append(UInt8(ascii: "{"))
        for (index, member) in members.sorted(by: { JSONSerializer.codePointOrder($0.key, $1.key) }).enumerated() {
            if index > 0 { serializer.output.append(UInt8(ascii: ",")) }
            serializer.writeString(member.key)
            serializer.output.append(UInt8(ascii: ":"))
            guard write(member.value, into: &serializer, depth: depth + 1) else { return false }
        }
        serializer.output.append(UInt8(ascii: "}"))
        return true
    }

    private static func writeInteger(_ number: Int64, into serializer: inout JSONSerializer) -> Bool {
        guard number.magnitude <= UInt64(JSONNumberFormat.exactIntegerLimit) else { return false }
        serializer.writeInteger(number)
        return true
    }
}
