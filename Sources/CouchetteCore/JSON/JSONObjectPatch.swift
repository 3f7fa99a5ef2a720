/// Sets and removes top-level members of a JSON object's text without parsing it: the unchanged members are
/// copied as bytes. Saving a document read from storage with one property changed then costs a scan of its
/// text instead of parsing it into values and writing them out again.
///
/// Only text in the form ``JSONValue/serialized(prettyPrinted:)`` writes is patched, so that the result is
/// byte for byte what serializing the edited object would give (and a revision's digest does not depend on the
/// way it was saved): compact, members sorted by code point, and nothing whose serialized or canonical form
/// could differ from the text (escapes, fractions, exponents, integers beyond 2^53, `-0`). Top-level member
/// names starting with `_` (metadata) are refused too. Anything else gives nil, for the caller to parse.
///
/// ```swift
/// JSONObjectPatch.applying([("done", .bool(true)), ("note", nil)], to: Array(#"{"done":false,"note":"x"}"#.utf8))
/// // {"done":true}
/// ```
package enum JSONObjectPatch {
    /// `base` with each edit applied: a member set to the value, or removed when the value is nil.
    ///
    /// - Parameter edits: At most one edit per name, in any order; names must not start with `_`.
    /// - Returns: The new text, or nil when `base` or an edit is outside the forms described above.
    package static func applying(_ edits: [(name: String, value: JSONValue?)], to base: [UInt8]) -> [UInt8]? {
        var sortedEdits: [(name: [UInt8], value: JSONValue?)] = []
        sortedEdits.reserveCapacity(edits.count)
        for edit in edits {
            let name = Array(edit.name.utf8)
            guard name.first != UInt8(ascii: "_"), edit.value.map(isPlain) ?? true else { return nil }
            sortedEdits.append((name, edit.value))
        }
        sortedEdits.sort { $0.name.lexicographicallyPrecedes($1.name) }
        return base.withUnsafeBufferPointer { bytes -> [UInt8]? in
            guard let members = topLevelMembers(of: bytes) else { return nil }
            var output: [UInt8] = [UInt8(ascii: "{")]
            output.reserveCapacity(bytes.count + 64)
            var editIndex = 0
            for member in members {
                let name = UnsafeBufferPointer(rebasing: bytes[member.name])
                // Edits sorting before this member are new members.
                while editIndex < sortedEdits.count, sortedEdits[editIndex].name.lexicographicallyPrecedes(name) {
                    if let value = sortedEdits[editIndex].value {
                        appendMember(&output, name: escapedName(sortedEdits[editIndex].name), value: value)
                    }
                    editIndex += 1
                }
                if editIndex < sortedEdits.count, sortedEdits[editIndex].name.elementsEqual(name) {
                    if let value = sortedEdits[editIndex].value { appendMember(&output, name: name, value: value) }
                    editIndex += 1
                } else {
                    if output.count > 1 { output.append(UInt8(ascii: ",")) }
                    // The member as it is: from its name's opening quote to the end of its value.
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(member.name.lowerBound - 1)..<member.value.upperBound]))
                }
            }
            for edit in sortedEdits[editIndex...] {
                if let value = edit.value { appendMember(&output, name: escapedName(edit.name), value: value) }
            }
            output.append(UInt8(ascii: "}"))
            return output
        }
    }

    /// Appends `"name":value` to an object being written, after a comma unless it is the first member.
    private static func appendMember<Name: Sequence<UInt8>>(_ output: inout [UInt8], name: Name, value: JSONValue) {
        if output.count > 1 { output.append(UInt8(ascii: ",")) }
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: name)
        output.append(contentsOf: "\":".utf8)
        switch value {
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: output.append(contentsOf: "null".utf8)
        default: output.append(contentsOf: value.serialized())
        }
    }

    /// A value whose serialized form is also its canonical one: null, a Boolean, a string, an exact integer.
    private static func isPlain(_ value: JSONValue) -> Bool {
        switch value {
        case .null, .bool, .string: true
        case .int(let number): number.magnitude <= UInt64(JSONNumberFormat.exactIntegerLimit)
        case .double, .array, .object: false
        }
    }

    /// A member name as it is written between the quotes.
    private static func escapedName(_ name: [UInt8]) -> [UInt8] {
        let quoted = JSONValue.string(String(decoding: name, as: UTF8.self)).serialized()
        return Array(quoted.dropFirst().dropLast())
    }

    /// Where each top-level member's name (between the quotes) and value are, when `bytes` hold an object in
    /// the patchable form; nil otherwise.
    private static func topLevelMembers(
        of bytes: UnsafeBufferPointer<UInt8>
    ) -> [(name: Range<Int>, value: Range<Int>)]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else {
            return nil
        }
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        var position = 1
        if bytes.count == 2 { return members }
        while true {
            // A name: a plain string, after the previous one in code point order, not metadata.
            guard bytes[position] == UInt8(ascii: "\""), let nameEnd = stringEnd(bytes, from: position) else { return nil }
            let name = (position + 1)..<(nameEnd - 1)
            guard !name.isEmpty, bytes[name.lowerBound] != UInt8(ascii: "_") else { return nil }
            if let previous = members.last?.name {
                guard bytes[previous].lexicographicallyPrecedes(bytes[name]) else { return nil }
            }
            guard nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: ":") else { return nil }
            let valueStart = nameEnd + 1
            guard let valueEnd = valueEnd(bytes, from: valueStart) else { return nil }
            members.append((name, valueStart..<valueEnd))
            if valueEnd == bytes.count - 1 { return members }
            guard bytes[valueEnd] == UInt8(ascii: ","), valueEnd + 1 < bytes.count - 1 else { return nil }
            position = valueEnd + 1
        }
    }

    /// The end (past the closing quote) of the string starting at `start`; nil when it holds an escape (or a
    /// control character the serializer would escape) or does not end.
    private static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var position = start + 1
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { return position + 1 }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            position += 1
        }
        return nil
    }

    /// The end of the value starting at `start`, stopping before the delimiter that follows it at depth 0;
    /// nil when the value is not in the patchable form.
    private static func valueEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var position = start
        var depth = 0
        let end = bytes.count - 1  // the object's closing brace
        while position < end {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                guard let after = stringEnd(bytes, from: position) else { return nil }
                position = after
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
                position += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                if depth == 0 { return byte == UInt8(ascii: ",") && position > start ? position : nil }
                position += 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let after = integerEnd(bytes, from: position) else { return nil }
                position = after
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                guard let after = literalEnd(bytes, from: position) else { return nil }
                position = after
            default:
                return nil  // whitespace, or not JSON
            }
        }
        return depth == 0 && position > start ? position : nil
    }

    /// The end of an integer written exactly (no fraction or exponent, no `-0`, at most 15 digits).
    private static func integerEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var position = start
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digitsStart = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        let digits = position - digitsStart
        guard digits >= 1, digits <= 15, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0"),
            !(digits == 1 && bytes[digitsStart] == UInt8(ascii: "0") && digitsStart > start)
        else { return nil }
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"): return position
        default: return nil
        }
    }

    /// The end of `true`, `false` or `null`.
    private static func literalEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let literal: StaticString =
            switch bytes[start] {
            case UInt8(ascii: "t"): "true"
            case UInt8(ascii: "f"): "false"
            default: "null"
            }
        let count = literal.utf8CodeUnitCount
        guard start + count <= bytes.count,
            bytes[start..<(start + count)].elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: count))
        else { return nil }
        return start + count
    }
}
