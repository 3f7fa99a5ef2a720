// MARK: - JSONDelta

/// Couchbase's JSON deltas (Fleece's `JSONDelta`), which delta sync sends instead of a whole revision body (spec:
/// blip-sync-protocol.md §4.2). A delta is a JSON value read against an old value:
///
/// | delta | effect |
/// | --- | --- |
/// | a number, string, `true`, `false` or `null` | replaces the old value |
/// | `[v]` | replaces the old value with `v` (an array or object) |
/// | `[]` | removes the value from its parent object |
/// | `{"k": δ, …}` on an object | applies `δ` to member `k` (inserting it when absent) |
/// | `{"i": δ, …, "n-": [v…]}` on an array | patches element `i`; `"n-"` replaces the elements from `n` on |
/// | `["ops", 0, 2]` on a string | edits the text: `N=` keeps, `N-` skips, `N+text\|` inserts N UTF-8 bytes |
///
/// ```swift
/// let old: JSONValue = ["name": "Ann", "age": 30, "tags": ["a", "b"], "city": "Oslo"]
/// let new: JSONValue = ["name": "Ann", "age": 31, "tags": ["a", "b", "c"]]
/// let delta = JSONDelta.make(from: old, to: new)   // {"age":31,"tags":{"2-":["c"]},"city":[]}
/// try JSONDelta.apply(delta!, to: old) == new      // true
/// ```
///
/// ``make(from:to:)`` uses object recursion, array tails and element patches, and replacement; it never writes text
/// edits (applying them is supported).
public enum JSONDelta {
    // MARK: - Applying

    /// The value `delta` turns `old` into.
    ///
    /// - Throws: ``CoreError/Code/invalidDelta`` for a malformed delta, or one that does not fit `old` (an array
    ///   patch on an object, a text edit whose counts do not add up, a removal at the top).
    public static func apply(_ delta: JSONValue, to old: JSONValue) throws(CoreError) -> JSONValue {
        guard let value = try applying(delta, to: old) else { throw invalid("a delta cannot remove the whole value") }
        return value
    }

    /// `nil` when the delta removes the value.
    private static func applying(_ delta: JSONValue, to old: JSONValue?) throws(CoreError) -> JSONValue? {
        switch delta {
        case .array(let items):
            switch items.count {
            case 0: return nil
            case 1: return items[0]
            case 3 where items[1] == 0 && items[2] == 2:
                guard case .string(let operations) = items[0], case .string(let text)? = old else {
                    throw invalid("a text edit applies to a string")
                }
                return .string(try editText(text, with: operations))
            default:
                throw invalid("an array delta has 0, 1 or 3 items")
            }
        case .object(let members):
            switch old {
            case .object(var object)?:
                for (key, memberDelta) in members {
                    object[key] = try applying(memberDelta, to: object[key])
                }
                return .object(object)
            case .array(let array)?:
                return .array(try patch(array, with: members))
            case nil:
                // A member inserted as an object delta: every key of it is an insertion.
                return try applying(delta, to: .object([:]))
            default:
                throw invalid("an object delta applies to an object or an array")
            }
        default:
            return delta
        }
    }

    /// An array patched by `{"i": δ, "n-": [v…]}`.
    private static func patch(_ array: [JSONValue], with members: [String: JSONValue]) throws(CoreError) -> [JSONValue] {
        var result = array
        var tail: (start: Int, values: [JSONValue])?
        for (key, memberDelta) in members {
            if key.hasSuffix("-") {
                guard let start = Int(key.dropLast()), (0...array.count).contains(start),
                    case .array(let values) = memberDelta
                else { throw invalid("bad array tail \"\(key)\"") }
                tail = (start, values)
            } else {
                guard let index = Int(key), array.indices.contains(index) else {
                    throw invalid("bad array index \"\(key)\"")
                }
                guard let patched = try applying(memberDelta, to: array[index]) else {
                    throw invalid("an array element cannot be removed by index")
                }
                result[index] = patched
            }
        }
        if let tail { result = Array(result[..<tail.start]) + tail.values }
        return result
    }

    /// Applies text edits (`N=`, `N-`, `N+text|`, counts in UTF-8 bytes) to `text`.
    private static func editText(_ text: String, with operations: String) throws(CoreError) -> String {
        let old = Array(text.utf8)
        let ops = Array(operations.utf8)
        var result: [UInt8] = []
        var position = 0
        var cursor = 0
        while cursor < ops.count {
            var count = 0
            var digits = 0
            while cursor < ops.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(ops[cursor]) {
                count = count * 10 + Int(ops[cursor] - UInt8(ascii: "0"))
                cursor += 1
                digits += 1
                if count > ops.count + old.count { throw invalid("a text edit count is too large") }
            }
            guard digits > 0, cursor < ops.count else { throw invalid("a text edit lacks its operation") }
            let operation = ops[cursor]
            cursor += 1
            switch operation {
            case UInt8(ascii: "="), UInt8(ascii: "-"):
                guard position + count <= old.count else { throw invalid("a text edit runs past the old text") }
                if operation == UInt8(ascii: "=") { result += old[position..<(position + count)] }
                position += count
            case UInt8(ascii: "+"):
                guard cursor + count < ops.count, ops[cursor + count] == UInt8(ascii: "|") else {
                    throw invalid("a text insertion lacks its end marker")
                }
                result += ops[cursor..<(cursor + count)]
                cursor += count + 1
            default:
                throw invalid("unknown text edit \"\(Character(Unicode.Scalar(operation)))\"")
            }
        }
        guard position == old.count else { throw invalid("a text edit does not cover the old text") }
        guard let edited = String(validating: result, as: UTF8.self) else { throw invalid("a text edit splits a character") }
        return edited
    }

    // MARK: - Making

    /// The delta from `old` to `new`, or nil when they are equal.
    public static func make(from old: JSONValue, to new: JSONValue) -> JSONValue? {
        if old == new { return nil }
        switch (old, new) {
        case (.object(let before), .object(let after)):
            var members: [String: JSONValue] = [:]
            for (key, value) in after {
                if let previous = before[key] {
                    if let memberDelta = make(from: previous, to: value) { members[key] = memberDelta }
                } else {
                    members[key] = replacement(value)
                }
            }
            for key in before.keys where after[key] == nil { members[key] = [] }
            return .object(members)
        case (.array(let before), .array(let after)) where !before.isEmpty:
            var members: [String: JSONValue] = [:]
            let common = min(before.count, after.count)
            for index in 0..<common {
                if let elementDelta = make(from: before[index], to: after[index]) { members[String(index)] = elementDelta }
            }
            if after.count != before.count { members["\(common)-"] = .array(Array(after[common...])) }
            return .object(members)
        default:
            return replacement(new)
        }
    }

    /// `value` as a replacing delta: arrays and objects wrapped in `[…]`.
    private static func replacement(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array, .object: .array([value])
        default: value
        }
    }

    private static func invalid(_ message: String) -> CoreError {
        CoreError(.invalidDelta, "Invalid JSON delta: \(message)")
    }
}
