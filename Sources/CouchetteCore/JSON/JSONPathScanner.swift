/// Finds the value at a path of member names and array positions in JSON text, stepping over everything that is not
/// on the path instead of parsing it: reading two properties of a stored document this way costs a fraction of
/// parsing the whole document.
///
/// ```swift
/// let path = [JSONPathScanner.Step("taskList"), JSONPathScanner.Step("id")]
/// JSONPathScanner.value(in: body, at: path)        // .string("list-1"), or nil when missing
/// ```
///
/// The text is assumed well-formed (as stored documents are); malformed text gives nil, never a crash. When a
/// member name repeats, the first one counts.
package enum JSONPathScanner {
    /// A step of a path: a member name (as UTF-8) or an array position (negative counts from the end).
    package enum Step: Sendable, Equatable {
        case key([UInt8])
        case index(Int)

        package init(_ key: String) {
            self = .key(Array(key.utf8))
        }
    }

    /// The value at `path`, or nil when it is missing.
    package static func value(in bytes: UnsafeRawBufferPointer, at path: [Step]) -> JSONValue? {
        let buffer = bytes.bindMemory(to: UInt8.self)
        guard let range = range(in: buffer, at: path) else { return nil }
        return try? JSONValue(parsing: UnsafeBufferPointer(rebasing: buffer[range]))
    }

    /// The byte range of the value at `path`, or nil when it is missing.
    package static func range(in bytes: UnsafeBufferPointer<UInt8>, at path: [Step]) -> Range<Int>? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        for step in path {
            switch step {
            case .key(let key): guard scanner.enterMember(key) else { return nil }
            case .index(let index): guard scanner.enterElement(index) else { return nil }
            }
        }
        let start = scanner.position
        guard scanner.skipValue() else { return nil }
        return start..<scanner.position
    }

    /// The byte ranges of the elements of the array that `bytes` hold, or nil when they do not hold one.
    package static func elementRanges(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>]? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        return scanner.elements()
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        private mutating func expect(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            position += 1
            skipWhitespace()
            return true
        }

        /// Moves from an object to the value of its member `key`.
        mutating func enterMember(_ key: [UInt8]) -> Bool {
            guard expect(UInt8(ascii: "{")) else { return false }
            if current == UInt8(ascii: "}") { return false }
            while true {
                let nameStart = position
                guard let escaped = skipString() else { return false }
                let matches = escaped
                    ? (try? JSONValue(parsing: UnsafeBufferPointer(rebasing: bytes[nameStart..<position])))?.stringValue
                        .map { Array($0.utf8) == key } ?? false
                    : position - nameStart - 2 == key.count && bytes[(nameStart + 1)...].starts(with: key)
                skipWhitespace()
                guard expect(UInt8(ascii: ":")) else { return false }
                if matches { return true }
                guard skipValue() else { return false }
                skipWhitespace()
                guard expect(UInt8(ascii: ",")) else { return false }
            }
        }

        /// Moves from an array to its element at `index` (from the end when negative).
        mutating func enterElement(_ index: Int) -> Bool {
            guard expect(UInt8(ascii: "[")) else { return false }
            if current == UInt8(ascii: "]") { return false }
            var starts: [Int] = []
            var count = 0
            while true {
                if index >= 0, count == index { return true }
                if index < 0 { starts.append(position) }
                guard skipValue() else { return false }
                count += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") { break }
                guard expect(UInt8(ascii: ",")) else { return false }
            }
            guard index < 0, count + index >= 0 else { return false }
            position = starts[count + index]
            return true
        }

        /// Steps over an array, collecting where its elements are.
        mutating func elements() -> [Range<Int>]? {
            guard expect(UInt8(ascii: "[")) else { return nil }
            var ranges: [Range<Int>] = []
            if current == UInt8(ascii: "]") { return ranges }
            while true {
                let start = position
                guard skipValue() else { return nil }
                ranges.append(start..<position)
                skipWhitespace()
                if current == UInt8(ascii: "]") { return ranges }
                guard expect(UInt8(ascii: ",")) else { return nil }
            }
        }

        /// Steps over one value.
        mutating func skipValue() -> Bool {
            switch current {
            case UInt8(ascii: "\""): return skipString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["): return skipContainer()
            case nil: return false
            default:
                // A number, true, false or null: up to the next delimiter.
                let start = position
                while let byte = current, byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), byte != UInt8(ascii: "]"),
                    byte != 0x20, byte != 0x0A, byte != 0x0D, byte != 0x09
                {
                    position += 1
                }
                return position > start
            }
        }

        /// Steps over a string; whether it holds escapes, or nil when it does not end.
        private mutating func skipString() -> Bool? {
            guard current == UInt8(ascii: "\"") else { return nil }
            position += 1
            var escaped = false
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    return escaped
                case UInt8(ascii: "\\"):
                    escaped = true
                    position += 2
                default:
                    position += 1
                }
            }
            return nil
        }

        /// Steps over an object or array, counting brackets outside strings.
        private mutating func skipContainer() -> Bool {
            var depth = 0
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    guard skipString() != nil else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        position += 1
                        return true
                    }
                default: break
                }
                position += 1
            }
            return false
        }
    }
}
