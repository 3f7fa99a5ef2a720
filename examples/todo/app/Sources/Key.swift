import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key the full-screen app understands.
enum Key: Sendable, Equatable {
    case character(Character)
    case up, down, left, right
    case enter, escape, backspace, tab
    case control(Character)

    /// The keys in `bytes`, one read from the terminal: escape sequences for arrows, a lone ESC as Escape.
    static func parse(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") {
                    switch bytes[index + 2] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                    index += 3
                    // The rest of a longer sequence (e.g. "\e[3~").
                    while index < bytes.count, bytes[index - 1] != UInt8(ascii: "~"), (0x30...0x3F).contains(bytes[index]) {
                        index += 1
                    }
                    if index < bytes.count, bytes[index] == UInt8(ascii: "~") { index += 1 }
                    continue
                }
                keys.append(.escape)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            case 0x01...0x1A: keys.append(.control(Character(UnicodeScalar(byte + 0x60))))
            case 0x20...0x7E: keys.append(.character(Character(UnicodeScalar(byte))))
            default:
                // UTF-8: decode the whole character.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                let end = min(bytes.count, index + length)
                if let text = String(bytes: bytes[index..<end], encoding: .utf8), let character = text.first {
                    keys.append(.character(character))
                }
                index = end
                continue
            }
            index += 1
        }
        return keys
    }

    /// Reads standard input on a thread of its own and hands each key to `deliver`; ends at end of input.
    static func readKeys(_ deliver: @escaping @Sendable (Key?) -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    deliver(nil)
                    return
                }
                for key in parse(Array(buffer[0..<count])) { deliver(key) }
            }
        }
        thread.start()
    }
}
