import CouchetteCore
import Foundation

/// The typed readings shared by documents, dictionaries, arrays and fragments, so every getter converts a
/// stored value the same way (`nil` is a missing key or an index out of range).
extension DocumentValues {
    /// A number as an `Int` (a double truncated toward zero), a Boolean as 1 or 0, otherwise 0.
    static func int(_ json: JSONValue?) -> Int {
        guard let json else { return 0 }
        if let integer = json.intValue, let result = Int(exactly: integer) { return result }
        if let double = json.doubleValue { return Int(exactly: double.rounded(.towardZero)) ?? 0 }
        if case .bool(let flag) = json { return flag ? 1 : 0 }
        return 0
    }

    /// A number as an `Int64` (exact for integers, a double truncated toward zero), a Boolean as 1 or 0,
    /// otherwise 0.
    static func int64(_ json: JSONValue?) -> Int64 {
        guard let json else { return 0 }
        if let integer = json.intValue { return integer }
        if let double = json.doubleValue { return Int64(exactly: double.rounded(.towardZero)) ?? 0 }
        if case .bool(let flag) = json { return flag ? 1 : 0 }
        return 0
    }

    /// A number as a `Double`, a Boolean as 1 or 0, otherwise 0.
    static func double(_ json: JSONValue?) -> Double {
        if case .bool(let flag)? = json { return flag ? 1 : 0 }
        return json?.doubleValue ?? 0
    }

    /// A number as an `NSNumber`, or nil.
    static func number(_ json: JSONValue?) -> NSNumber? {
        switch json {
        case .int(let integer)?: NSNumber(value: integer)
        case .double(let number)?: NSNumber(value: number)
        default: nil
        }
    }

    /// A Boolean, or whether a number is non-zero; false otherwise.
    static func boolean(_ json: JSONValue?) -> Bool {
        switch json {
        case .bool(let flag)?: flag
        case .int(let integer)?: integer != 0
        case .double(let number)?: number != 0
        default: false
        }
    }

    /// An ISO-8601 string as a date, or nil.
    static func date(_ json: JSONValue?) -> Date? {
        json?.stringValue.flatMap(date(from:))
    }

    /// A blob dictionary (`"@type": "blob"` with a digest) as a blob whose content is read from the
    /// collection's database, or nil.
    static func blob(_ json: JSONValue?, collection: Collection?) -> Blob? {
        guard case .object(let members)? = json, members["@type"] == "blob", members["digest"]?.stringValue != nil
        else { return nil }
        let properties = members.mapValues(value(from:))
        return try? Blob(properties: properties, store: collection?.database.currentBlobStore)
    }
}
