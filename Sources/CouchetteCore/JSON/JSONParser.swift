/// A strict RFC 8259 parser producing ``JSONValue``s.
///
/// It rejects what other parsers quietly repair: invalid UTF-8, lone surrogate escapes, leading zeros, trailing
/// commas, trailing garbage, integers beyond 64 bits, and nesting deeper than ``maximumDepth``. Errors name the
/// byte offset.
struct JSONParser: ~Copyable {
    /// The default nesting limit for arrays and objects.
    static let defaultMaximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var position = 0
    private var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses the whole input as one JSON value.
    mutating func parseDocument() throws(CoreError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("Unexpected data after the JSON value") }
        return value
    }

    // MARK: - Values

    private mutating func parseValue() throws(CoreError) -> JSONValue {
        guard position < bytes.count else { throw error("Unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("Unexpected character \(describe(bytes[position]))")
        }
    }

    private mutating func parseObject() throws(CoreError) -> JSONValue {
        try enterContainer()
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("Expected a string key in object")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("Expected ':' after object key")
            }
            position += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            guard position < bytes.count else { throw error("Unexpected end of input in object") }
            let separator = bytes[position]
            position += 1
            if separator == UInt8(ascii: ",") { continue }
            if separator == UInt8(ascii: "}") { break }
            position -= 1
            throw error("Expected ',' or '}' in object")
        }
        depth -= 1
        return .object(members)
    }

    private mutating func parseArray() throws(CoreError) -> JSONValue {
        try enterContainer()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("Unexpected end of input in array") }
            let separator = bytes[position]
            position += 1
            if separator == UInt8(ascii: ",") { continue }
            if separator == UInt8(ascii: "]") { break }
            position -= 1
            throw error("Expected ',' or ']' in array")
        }
        depth -= 1
        return .array(elements)
    }

    private mutating func enterContainer() throws(CoreError) {
        depth += 1
        guard depth <= maximumDepth else {
            throw CoreError(
                .nestingTooDeep, "JSON is nested deeper than \(maximumDepth) levels at offset \(position)",
                byteOffset: position)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(CoreError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("Invalid literal") }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] {
            throw error("Invalid literal")
        }
        position += count
    }

    // MARK: - Strings

    private mutating func parseString() throws(CoreError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return try makeString(slice, at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("Unescaped control character in string") }
            position += 1
        }
        guard position < bytes.count else { throw error("Unterminated string") }
        var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try buffer.withUnsafeBufferPointer { pointer throws(CoreError) in
                    try makeString(pointer, at: start)
                }
            case UInt8(ascii: "\\"):
                position += 1
                try appendEscape(to: &buffer)
            case 0..<0x20:
                throw error("Unescaped control character in string")
            default:
                buffer.append(byte)
                position += 1
            }
        }
        throw error("Unterminated string")
    }

    private func makeString(_ slice: UnsafeBufferPointer<UInt8>, at offset: Int) throws(CoreError) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw CoreError(.invalidJSON, "Invalid UTF-8 in string at offset \(offset)", byteOffset: offset)
        }
        return string
    }

    private mutating func appendEscape(to buffer: inout [UInt8]) throws(CoreError) {
        guard position < bytes.count else { throw error("Unterminated escape") }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalarValue = UInt32(try parseHexQuad())
            if (0xD800...0xDBFF).contains(scalarValue) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("Unpaired high surrogate in \\u escape") }
                position += 2
                let low = UInt32(try parseHexQuad())
                guard (0xDC00...0xDFFF).contains(low) else { throw error("Invalid low surrogate in \\u escape") }
                scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalarValue) {
                throw error("Unpaired low surrogate in \\u escape")
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw error("Invalid \\u escape") }
            buffer.append(contentsOf: UTF8.encode(scalar)!)
        default:
            position -= 1
            throw error("Invalid escape \\\(describe(escape))")
        }
    }

    private mutating func parseHexQuad() throws(CoreError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw error("Truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("Invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(CoreError) -> JSONValue {
        let start = position
        var isNegative = false
        if bytes[position] == UInt8(ascii: "-") {
            isNegative = true
            position += 1
        }
        guard position < bytes.count, isDigit(bytes[position]) else { throw error("Invalid number") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw error("Leading zero in number") }
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("Expected digits after '.'") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw error("Expected digits in exponent") }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if isInteger {
            var value: Int64 = 0
            var overflow = false
            for index in (start + (isNegative ? 1 : 0))..<position {
                let digit = Int64(bytes[index] - UInt8(ascii: "0"))
                let (shifted, overflowedMultiply) = value.multipliedReportingOverflow(by: 10)
                let (next, overflowedAdd) =
                    isNegative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
                if overflowedMultiply || overflowedAdd {
                    overflow = true
                    break
                }
                value = next
            }
            if overflow {
                throw CoreError(
                    .numberOutOfRange,
                    "Integer at offset \(start) does not fit in 64 bits; it is rejected rather than rounded",
                    byteOffset: start)
            }
            return .int(value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw CoreError(.numberOutOfRange, "Number at offset \(start) is out of range", byteOffset: start)
        }
        return .double(value)
    }

    // MARK: - Helpers

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private func error(_ message: String) -> CoreError {
        CoreError(.invalidJSON, "\(message) at offset \(position)", byteOffset: position)
    }
}

// MARK: - Public entry points

extension JSONValue {
    /// Parses JSON text given as UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text, any contiguous byte collection (`[UInt8]`, `Data`, a slice).
    ///   - maximumDepth: How deeply arrays and objects may nest; 512 by default.
    /// - Throws: ``CoreError`` `.invalidJSON`, `.numberOutOfRange` or `.nestingTooDeep`, naming the offset.
    public init(parsing bytes: some Collection<UInt8>, maximumDepth: Int = 512) throws(CoreError) {
        let parsed: Result<JSONValue, CoreError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
            return Result { () throws(CoreError) in try parser.parseDocument() }
        }
        if let parsed {
            self = try parsed.get()
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { buffer in
                var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
                return Result { () throws(CoreError) in try parser.parseDocument() }
            }.get()
        }
    }

    /// Parses JSON text.
    ///
    /// - Throws: ``CoreError`` when the text is not one well-formed JSON value.
    public init(parsing text: String, maximumDepth: Int = 512) throws(CoreError) {
        var text = text
        let parsed = text.withUTF8 { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
            return Result { () throws(CoreError) in try parser.parseDocument() }
        }
        self = try parsed.get()
    }
}
