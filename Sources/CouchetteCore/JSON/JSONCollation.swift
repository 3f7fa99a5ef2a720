import Foundation

/// CouchDB's collation of JSON values, as byte strings that sort the same way under a plain byte comparison
/// (`memcmp`, SQLite's `BLOB` order), so that view indexes are ordinary SQLite indexes.
///
/// The order is CouchDB's: `null` < `false` < `true` < numbers (by value) < strings < arrays (element by element,
/// a prefix first) < objects (member by member, keys in collation order, fewer members first).
///
/// Strings follow the Unicode Collation Algorithm's levels the way ICU's root collation does for Latin text:
/// first the letters and digits with case and accents ignored, then the accents, then the case (lowercase first),
/// so `"a" < "A" < "á" < "b"` and `"Aa" < "ab"`. ASCII punctuation and digits are ranked as ICU ranks them (CouchDB's
/// list: whitespace, `` ` ^ _ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % + < = > | ~ $ ``, digits, letters).
/// Other characters are ranked by their lowercase, unaccented code point, after ASCII; that is where this differs
/// from full ICU (for example `"ø"` sorts after `"z"`). Two strings are equal only when identical.
///
/// ```swift
/// JSONCollation.sortKey(.string("a")) < JSONCollation.sortKey(.string("B"))   // true
/// JSONCollation.compare(.int(10), .array([]))                                     // .orderedAscending
/// ```
public enum JSONCollation {
    /// The byte string of `value`; byte order is collation order.
    public static func sortKey(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        append(value, to: &bytes)
        return bytes
    }

    /// Compares two values in collation order.
    public static func compare(_ left: JSONValue, _ right: JSONValue) -> ComparisonResult {
        let (a, b) = (sortKey(left), sortKey(right))
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }

    /// The byte string bounding every key that has `value` as a prefix (CBL's `prefixMatchLevel`): for a string,
    /// every string starting with it (case and accents ignored, as the collation's first level); for an array, every
    /// array starting with its elements — with `level` 2 and more, the last element is itself taken as a prefix.
    /// Other values bound only themselves.
    public static func prefixUpperBound(_ value: JSONValue, level: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        switch value {
        case .string(let text) where level >= 1:
            bytes.append(Tag.string)
            appendPrimary(text, to: &bytes)
            bytes.append(0xFF)
        case .array(let elements) where level >= 1:
            bytes.append(Tag.array)
            for (index, element) in elements.enumerated() {
                if index == elements.count - 1, level >= 2 {
                    bytes += prefixUpperBound(element, level: level - 1)
                    return bytes
                }
                append(element, to: &bytes)
            }
            bytes.append(0xFF)
        default:
            append(value, to: &bytes)
        }
        return bytes
    }

    // MARK: - Encoding

    enum Tag {
        static let end: UInt8 = 0x00
        static let null: UInt8 = 0x02
        static let `false`: UInt8 = 0x03
        static let `true`: UInt8 = 0x04
        static let number: UInt8 = 0x05
        static let string: UInt8 = 0x06
        static let array: UInt8 = 0x07
        static let object: UInt8 = 0x08
    }

    /// Separates a string's levels; lower than every weight byte.
    static let levelSeparator: UInt8 = 0x01

    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(Tag.null)
        case .bool(let flag): bytes.append(flag ? Tag.true : Tag.false)
        case .int(let number): appendNumber(Double(number), to: &bytes)
        case .double(let number): appendNumber(number, to: &bytes)
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(Tag.array)
            for element in elements { append(element, to: &bytes) }
            bytes.append(Tag.end)
        case .object(let members):
            bytes.append(Tag.object)
            let keyed = members.map { (key: sortKey(.string($0.key)), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            for member in keyed {
                bytes += member.key
                append(member.value, to: &bytes)
            }
            bytes.append(Tag.end)
        }
    }

    /// A tag and 8 bytes whose order is the numbers' (the sign bit flipped for positives, every bit for negatives).
    static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        bytes.append(Tag.number)
        let value = number == 0 ? 0 : number  // -0 sorts as 0
        var bits = value.bitPattern
        bits = value < 0 ? ~bits : bits | (1 << 63)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    /// A string: its first level (base characters), second (accents), third (case), each ended by the separator,
    /// then for non-ASCII text the UTF-8 itself (escaped), and a two-byte end.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(Tag.string)
        let characters = baseCharacters(text)
        for character in characters { appendWeight(character.primary, to: &bytes) }
        bytes.append(levelSeparator)
        var secondary: [UInt8] = []
        var tertiary: [UInt8] = []
        for character in characters {
            for mark in character.marks { appendWeight(mark, to: &secondary) }
            secondary.append(commonWeight)
            tertiary.append(character.isUpper ? commonWeight + 1 : commonWeight)
        }
        // Trailing common weights change nothing once the separator (lower) ends the level.
        while secondary.last == commonWeight { secondary.removeLast() }
        while tertiary.last == commonWeight { tertiary.removeLast() }
        bytes += secondary
        bytes.append(levelSeparator)
        bytes += tertiary
        bytes.append(levelSeparator)
        if !text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 {
                switch byte {
                case 0x00: bytes += [levelSeparator, 0x02]
                case 0x01: bytes += [levelSeparator, 0x03]
                default: bytes.append(byte)
                }
            }
        }
        bytes += [levelSeparator, levelSeparator]
    }

    /// Compares two strings in the collation's string order, optionally ignoring case (third level) or accents
    /// (second level); strings that differ only in what is ignored compare equal. SQL++ `COLLATE UNICODE`.
    ///
    /// ```swift
    /// JSONCollation.compareStrings("Zoë", "zoe", ignoringCase: true, ignoringAccents: true)   // .orderedSame
    /// ```
    public static func compareStrings(
        _ left: String, _ right: String, ignoringCase: Bool = false, ignoringAccents: Bool = false
    ) -> ComparisonResult {
        let (leftKey, rightKey) = (
            stringKey(left, ignoringCase: ignoringCase, ignoringAccents: ignoringAccents),
            stringKey(right, ignoringCase: ignoringCase, ignoringAccents: ignoringAccents)
        )
        if leftKey == rightKey { return .orderedSame }
        return leftKey.lexicographicallyPrecedes(rightKey) ? .orderedAscending : .orderedDescending
    }

    /// A string's levels as bytes: the first, then the second and third unless ignored, then (when nothing is
    /// ignored) the text itself, so only identical strings are equal.
    static func stringKey(_ text: String, ignoringCase: Bool, ignoringAccents: Bool) -> [UInt8] {
        guard ignoringCase || ignoringAccents else {
            var bytes: [UInt8] = []
            appendString(text, to: &bytes)
            return bytes
        }
        let characters = baseCharacters(text)
        var bytes: [UInt8] = []
        for character in characters { appendWeight(character.primary, to: &bytes) }
        if !ignoringAccents {
            bytes.append(levelSeparator)
            for character in characters {
                for mark in character.marks { appendWeight(mark, to: &bytes) }
                bytes.append(commonWeight)
            }
        }
        if !ignoringCase {
            bytes.append(levelSeparator)
            for character in characters { bytes.append(character.isUpper ? commonWeight + 1 : commonWeight) }
        }
        return bytes
    }

    /// The weight of "nothing special" at the second and third levels.
    static let commonWeight: UInt8 = 0x02

    /// The first-level bytes of `text` alone (for prefix bounds).
    static func appendPrimary(_ text: String, to bytes: inout [UInt8]) {
        for character in baseCharacters(text) { appendWeight(character.primary, to: &bytes) }
    }

    /// A weight ≥ 2 as UTF-8 (which keeps the order of code points and has no 0x00 or 0x01 byte).
    static func appendWeight(_ weight: UInt32, to bytes: inout [UInt8]) {
        let scalar = Unicode.Scalar(weight) ?? Unicode.Scalar(0xFFFD)!
        bytes += Array(String(Character(scalar)).utf8)
    }

    struct BaseCharacter {
        var primary: UInt32
        var marks: [UInt32] = []
        var isUpper = false
    }

    /// The characters of `text` after canonical decomposition: each base character with its first-level weight,
    /// whether it was uppercase, and the combining marks that follow it.
    static func baseCharacters(_ text: String) -> [BaseCharacter] {
        var result: [BaseCharacter] = []
        let isASCII = text.utf8.allSatisfy { $0 < 0x80 }
        let scalars = isASCII ? text.unicodeScalars : text.decomposedStringWithCanonicalMapping.unicodeScalars
        result.reserveCapacity(text.utf8.count)
        for scalar in scalars {
            if scalar.value < 0x80 {
                let value = Int(scalar.value)
                result.append(BaseCharacter(primary: asciiPrimary[value], isUpper: value >= 0x41 && value <= 0x5A))
                continue
            }
            if scalar.properties.canonicalCombiningClass != .notReordered, !result.isEmpty {
                result[result.count - 1].marks.append(scalar.value)
                continue
            }
            let lower = scalar.properties.lowercaseMapping.unicodeScalars.first ?? scalar
            let primary = lower.value < 0x80 ? asciiPrimary[Int(lower.value)] : lower.value
            result.append(BaseCharacter(primary: primary, isUpper: lower != scalar))
        }
        return result
    }

    /// ICU's first-level order of ASCII characters, case folded; control characters first. Weights from 2.
    static let asciiPrimary: [UInt32] = {
        let ordered = "\t\n\r `^_-,;:!?.'\"()[]{}@*/\\&#%+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
        var weights = [UInt32](repeating: 0, count: 128)
        var next: UInt32 = 2
        for value in 0..<128 where !ordered.unicodeScalars.contains(Unicode.Scalar(UInt8(value))) {
            if (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) { continue }
            weights[value] = next  // control characters and DEL
            next += 1
        }
        for scalar in ordered.unicodeScalars {
            weights[Int(scalar.value)] = next
            next += 1
        }
        for upper in 0x41...0x5A { weights[upper] = weights[upper + 0x20] }
        return weights
    }()
}
