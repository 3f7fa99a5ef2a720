import CouchetteCore

// MARK: - SyncFunctionOutputReader

/// Reads the JavaScript wrapper's output array (see ``SyncFunctionScript``) straight into ``SyncFunctionOutput``s.
///
/// Building a ``JSONValue`` tree first and then walking it cost the Swift side twice what the JavaScript calls
/// themselves did (an array per call, per field and per `access()` pair, all made and freed again). The text is what
/// `JSON.stringify` wrote, without whitespace; the rare parts — a string with an escape, a number (`expiry()`,
/// `reject()`) — are handed to ``JSONValue/init(parsing:maximumDepth:)``.
///
/// ```swift
/// let outputs = SyncFunctionOutputReader.read(Array(#"[[["a"],[],[],[],null,[]],null]"#.utf8))
/// // [.success(channels ["a"]), nil]: the second call threw
/// ```
struct SyncFunctionOutputReader: ~Copyable {
    /// One call's output: nil when the call threw, a failure when its output is not the wrapper's shape.
    typealias Output = Result<SyncFunctionOutput, JavaScriptException>?

    private struct Malformed: Error {}

    private let bytes: UnsafeBufferPointer<UInt8>
    private var offset = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The outputs in `text`, one per call, or nil when `text` is not an array.
    static func read(_ text: [UInt8]) -> [Output]? {
        text.withUnsafeBufferPointer { bytes in
            var reader = SyncFunctionOutputReader(bytes)
            return try? reader.outputs()
        }
    }

    // MARK: - The wrapper's shape

    private mutating func outputs() throws(Malformed) -> [Output] {
        var outputs: [Output] = []
        try elements { (reader: inout SyncFunctionOutputReader) throws(Malformed) in
            if reader.skipLiteral("null") {
                outputs.append(nil)
                return
            }
            let start = reader.offset
            do {
                outputs.append(.success(try reader.output()))
            } catch {
                // Only a function tampering with the runtime gets here: that call fails, the others stand.
                reader.offset = start
                try reader.skipValue()
                outputs.append(.failure(JavaScriptException(message: "the sync function's output is malformed")))
            }
        }
        return outputs
    }

    /// `[channels, access, roles, expiry, reject, logs]`.
    private mutating func output() throws(Malformed) -> SyncFunctionOutput {
        var output = SyncFunctionOutput()
        try expect(UInt8(ascii: "["))
        output.channels = try strings()
        try expect(UInt8(ascii: ","))
        output.access = try pairs().map { (principals: $0.0, channels: $0.1) }
        try expect(UInt8(ascii: ","))
        output.roles = try pairs().map { (users: $0.0, roles: $0.1) }
        try expect(UInt8(ascii: ","))
        output.expiry = try scalars()
        try expect(UInt8(ascii: ","))
        if !skipLiteral("null") {
            let reject = try scalars()
            if reject.count == 2, let status = reject[0].intValue, let message = reject[1].stringValue {
                output.rejection = (Int(status), message)
            }
        }
        try expect(UInt8(ascii: ","))
        try elements { (reader: inout SyncFunctionOutputReader) throws(Malformed) in
            let line = try reader.scalars()
            if line.count == 2, let level = line[0].stringValue, let message = line[1].stringValue {
                output.logs.append((level, message))
            }
        }
        try expect(UInt8(ascii: "]"))
        return output
    }

    /// `[[names], [values]]` pairs (`access()` and `role()` calls).
    private mutating func pairs() throws(Malformed) -> [([String], [String])] {
        var pairs: [([String], [String])] = []
        try elements { (reader: inout SyncFunctionOutputReader) throws(Malformed) in
            try reader.expect(UInt8(ascii: "["))
            let names = try reader.strings()
            try reader.expect(UInt8(ascii: ","))
            let values = try reader.strings()
            try reader.expect(UInt8(ascii: "]"))
            pairs.append((names, values))
        }
        return pairs
    }

    // MARK: - JSON

    /// Calls `body` for each element of an array, positioned at the element.
    private mutating func elements(_ body: (inout SyncFunctionOutputReader) throws(Malformed) -> Void)
        throws(Malformed)
    {
        try expect(UInt8(ascii: "["))
        if peek == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try body(&self)
            guard offset < bytes.count else { throw Malformed() }
            offset += 1
            switch bytes[offset - 1] {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return
            default: throw Malformed()
            }
        }
    }

    private mutating func strings() throws(Malformed) -> [String] {
        var strings: [String] = []
        try elements { (reader: inout SyncFunctionOutputReader) throws(Malformed) in strings.append(try reader.string()) }
        return strings
    }

    /// An array of strings, numbers, booleans and nulls.
    private mutating func scalars() throws(Malformed) -> [JSONValue] {
        var values: [JSONValue] = []
        try elements { (reader: inout SyncFunctionOutputReader) throws(Malformed) in values.append(try reader.scalar()) }
        return values
    }

    private mutating func scalar() throws(Malformed) -> JSONValue {
        switch peek {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "n"): if skipLiteral("null") { return .null }
        case UInt8(ascii: "t"): if skipLiteral("true") { return true }
        case UInt8(ascii: "f"): if skipLiteral("false") { return false }
        default:
            let start = offset
            while let byte = peek, Self.isNumberByte(byte) { offset += 1 }
            if offset > start, let number = try? JSONValue(parsing: bytes[start..<offset]) { return number }
        }
        throw Malformed()
    }

    private mutating func string() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        var escaped = false
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                offset += 1
                guard escaped else { return String(decoding: bytes[start..<offset - 1], as: UTF8.self) }
                guard let string = (try? JSONValue(parsing: bytes[start - 1..<offset]))?.stringValue else {
                    throw Malformed()
                }
                return string
            case UInt8(ascii: "\\"):
                escaped = true
                offset += 2
            default:
                offset += 1
            }
        }
        throw Malformed()
    }

    /// Skips any value, for an output that is not the wrapper's shape.
    private mutating func skipValue() throws(Malformed) {
        var depth = 0
        while let byte = peek {
            if depth == 0, byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") { return }
            switch byte {
            case UInt8(ascii: "\""):
                _ = try string()
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                guard depth > 0 else { throw Malformed() }
                depth -= 1
            default: break
            }
            offset += 1
        }
        throw Malformed()
    }

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        guard peek == byte else { throw Malformed() }
        offset += 1
    }

    private mutating func skipLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        for index in 0..<count where bytes[offset + index] != literal.utf8Start[index] { return false }
        offset += count
        return true
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }
}
