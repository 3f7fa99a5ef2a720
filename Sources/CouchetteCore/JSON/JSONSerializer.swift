#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes ``JSONValue``s as UTF-8 JSON text.
///
/// Output is deterministic: object keys are sorted by Unicode code point, strings escape only what JSON
/// requires (`"`, `\`, control characters), integers are written exactly, doubles in Go's shortest round-trip
/// form (``JSONNumberFormat``) with `.0` kept on integral ones. The canonical form used for revision IDs writes
/// every number as Go does after reading it as a float64. Non-finite doubles, which JSON cannot represent, are
/// written as `null`.
struct JSONSerializer {
    var output: [UInt8] = []
    private let indentation: Int?
    private let canonical: Bool

    /// - Parameters:
    ///   - indentation: Spaces per level for pretty output; `nil` for compact output.
    ///   - canonical: Write numbers in the canonical form (``JSONValue/canonicalBytes``).
    init(indentation: Int? = nil, canonical: Bool = false, reservingCapacity capacity: Int = 256) {
        self.indentation = indentation
        self.canonical = canonical
        output.reserveCapacity(capacity)
    }

    mutating func write(_ value: JSONValue, level: Int = 0) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): writeInteger(number)
        case .double(let number): writeDouble(number)
        case .string(let string): writeString(string)
        case .array(let elements): writeArray(elements, level: level)
        case .object(let members): writeObject(members, level: level)
        }
    }

    // MARK: - Containers

    private mutating func writeArray(_ elements: [JSONValue], level: Int) {
        output.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(level: level + 1)
            write(element, level: level + 1)
        }
        if !elements.isEmpty { newline(level: level) }
        output.append(UInt8(ascii: "]"))
    }

    private mutating func writeObject(_ members: [String: JSONValue], level: Int) {
        output.append(UInt8(ascii: "{"))
        // Sort the pairs, not the keys: looking each key up again would hash it a second time.
        let sorted = members.sorted { JSONSerializer.codePointOrder($0.key, $1.key) }
        for (index, member) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(level: level + 1)
            writeString(member.key)
            output.append(UInt8(ascii: ":"))
            if indentation != nil { output.append(UInt8(ascii: " ")) }
            write(member.value, level: level + 1)
        }
        if !sorted.isEmpty { newline(level: level) }
        output.append(UInt8(ascii: "}"))
    }

    /// Orders strings by Unicode code point (the same as UTF-8 byte order).
    ///
    /// Keys are mostly short: their bytes are compared in a loop up to 32 of them, and by `memcmp` beyond (whose call
    /// costs more than a short key's comparison: it was a quarter of a `_bulk_docs` of documents with 1,000 keys).
    static func codePointOrder(_ lhs: String, _ rhs: String) -> Bool {
        let fast = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
                let common = min(left.count, right.count)
                let short = min(common, 32)
                var index = 0
                while index < short {
                    let (a, b) = (left[index], right[index])
                    if a != b { return a < b }
                    index += 1
                }
                if common > short {
                    let order = memcmp(left.baseAddress! + short, right.baseAddress! + short, common - short)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
        if let result = fast ?? nil { return result }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    private mutating func newline(level: Int) {
        guard let indentation else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indentation * level))
    }

    // MARK: - Scalars

    mutating func append(_ literal: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    mutating func writeInteger(_ number: Int64) {
        if number >= 0 && number < 10 {
            output.append(UInt8(ascii: "0") + UInt8(number))
        } else if canonical {
            output.append(contentsOf: JSONNumberFormat.goText(number).utf8)
        } else {
            output.append(contentsOf: String(number).utf8)
        }
    }

    mutating func writeDouble(_ number: Double) {
        let text = canonical ? JSONNumberFormat.goText(number) : JSONNumberFormat.storedText(number)
        guard let text else {
            append("null")
            return
        }
        output.append(contentsOf: text.utf8)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    mutating func writeString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    output.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30])
                    output.append(JSONSerializer.hexDigits[Int(byte >> 4)])
                    output.append(JSONSerializer.hexDigits[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}

// MARK: - Public entry points

extension JSONValue {
    /// Compact UTF-8 JSON text with keys sorted by code point.
    ///
    /// - Parameter prettyPrinted: Indent nested values by two spaces per level, one member per line.
    public func serialized(prettyPrinted: Bool = false) -> [UInt8] {
        var serializer = JSONSerializer(indentation: prettyPrinted ? 2 : nil)
        serializer.write(self)
        return serializer.output
    }

    /// Compact JSON text with keys sorted by code point, as a `String`.
    public func serializedString(prettyPrinted: Bool = false) -> String {
        String(decoding: serialized(prettyPrinted: prettyPrinted), as: UTF8.self)
    }

    /// The canonical form used for digests: no insignificant whitespace, object keys sorted by code point, and
    /// every number as Go's `encoding/json` writes it after reading it as a float64 (Sync Gateway's revision IDs):
    /// `2.0` and `2` are both `2`, `1e21` is `1e+21`, `1e-7` is `1e-7`, `-0.0` is `-0`, and integers beyond 2^53
    /// are rounded to the nearest double (`9007199254740993` is `9007199254740992`). Equal values always give equal
    /// bytes.
    public var canonicalBytes: [UInt8] {
        var serializer = JSONSerializer(canonical: true)
        serializer.write(self)
        return serializer.output
    }

    /// Whether ``canonicalBytes`` differ from ``serialized(prettyPrinted:)``: the value holds an integral double
    /// or an integer beyond 2^53.
    var hasNumbersOutsideCanonicalForm: Bool {
        switch self {
        case .null, .bool, .string: false
        case .int(let number): number.magnitude > UInt64(JSONNumberFormat.exactIntegerLimit)
        case .double(let number): number.isFinite && number.rounded(.towardZero) == number
        case .array(let elements): elements.contains { $0.hasNumbersOutsideCanonicalForm }
        case .object(let members): members.values.contains { $0.hasNumbersOutsideCanonicalForm }
        }
    }
}
