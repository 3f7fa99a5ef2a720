import CouchetteCore
import Foundation

/// Conversions between the values users put in documents (`String`, numbers, `Bool`, `Date`, `Blob`,
/// arrays, dictionaries, `nil`/`NSNull`) and stored JSON.
enum DocumentValues {
    /// ISO-8601 with fractional seconds, the form dates are stored in.
    nonisolated(unsafe) static let dateFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    nonisolated(unsafe) static let plainDateFormatter = ISO8601DateFormatter()
    private static let formatterLock = NSLock()

    static func string(from date: Date) -> String {
        formatterLock.withLock { dateFormatter.string(from: date) }
    }

    static func date(from string: String) -> Date? {
        formatterLock.withLock { dateFormatter.date(from: string) ?? plainDateFormatter.date(from: string) }
    }

    /// Converts a user value to JSON. Blobs become their metadata dictionary and are passed to `onBlob`
    /// (which installs them); dates become ISO-8601 strings.
    ///
    /// - Parameter path: The key path of `value`, used only in error messages.
    /// - Throws: `.badInput` (400) naming the key path of a value that is not JSON.
    static func json(from value: Any?, path: String, onBlob: (Blob) throws -> Void) throws -> JSONValue {
        do {
            return try convert(value, onBlob: onBlob)
        } catch let error as NotJSON {
            let location = path + error.path.reversed().joined()
            let shown = location.hasPrefix(".") ? String(location.dropFirst()) : location
            throw CouchetteError(.badInput, message: "\(shown.isEmpty ? "value" : shown): \(error.problem)")
        }
    }

    /// A value that is not JSON; `path` collects the keys (`.name`, `[2]`) innermost first on the way out.
    private struct NotJSON: Error {
        var path: [String]
        let problem: String
    }

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let doubleType = ObjectIdentifier(Double.self)
    private static let boolType = ObjectIdentifier(Bool.self)
    private static let jsonType = ObjectIdentifier(JSONValue.self)
    private static let anyDictionaryType = ObjectIdentifier([String: Any].self)
    private static let anyArrayType = ObjectIdentifier([Any].self)
    private static let stringDictionaryType = ObjectIdentifier([String: String].self)
    private static let stringArrayType = ObjectIdentifier([String].self)
    private static let intArrayType = ObjectIdentifier([Int].self)

    private static func convert(_ value: Any?, onBlob: (Blob) throws -> Void) throws -> JSONValue {
        guard let value else { return .null }
        // Dispatch on the exact dynamic type first: a failed `as?` cast from `Any` is slow, and most
        // values are one of these.
        switch ObjectIdentifier(type(of: value)) {
        case stringType: return .string(value as! String)
        case intType: return .int(Int64(value as! Int))
        case doubleType: return .double(value as! Double)
        case boolType: return .bool(value as! Bool)
        case jsonType: return value as! JSONValue
        // Collections of exactly these types: a conditional cast to `[String: Any]` or `[Any]` would copy
        // and re-box every element.
        case anyDictionaryType: return .object(try convert(members: value as! [String: Any], onBlob: onBlob))
        case anyArrayType: return .array(try convert(elements: value as! [Any], onBlob: onBlob))
        case stringDictionaryType: return .object((value as! [String: String]).mapValues(JSONValue.string))
        case stringArrayType: return .array((value as! [String]).map(JSONValue.string))
        case intArrayType: return .array((value as! [Int]).map { .int(Int64($0)) })
        default: break
        }
        if let members = value as? [String: Any] { return .object(try convert(members: members, onBlob: onBlob)) }
        if let elements = value as? [Any] { return .array(try convert(elements: elements, onBlob: onBlob)) }
        switch value {
        case let json as JSONValue: return json
        case let string as String: return .string(string)
        case let flag as Bool: return .bool(flag)
        case let integer as Int: return .int(Int64(integer))
        case let number as Double: return .double(number)
        case let integer as Int64: return .int(integer)
        case is NSNull: return .null
        case let blob as Blob:
            try onBlob(blob)
            return blob.json
        case let date as Date: return .string(string(from: date))
        // Couchbase Lite 3 containers: a mutable one holds values as set (blobs to install, dates), an
        // immutable one stored JSON.
        case let dictionary as MutableDictionaryObject:
            return .object(try convert(members: dictionary.snapshot(), onBlob: onBlob))
        case let array as MutableArrayObject: return .array(try convert(elements: array.snapshot(), onBlob: onBlob))
        case let dictionary as DictionaryObject: return .object(dictionary.jsonMembers())
        case let array as ArrayObject: return .array(array.jsonElements())
        case let data as Data:
            throw NotJSON(path: [], problem: "Data is not JSON; store it as a Blob (\(data.count) bytes)")
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                // A boxed optional: nil is null, a value converts as itself.
                guard let wrapped = mirror.children.first?.value else { return .null }
                return try convert(wrapped, onBlob: onBlob)
            }
            do {
                return try JSONValue(foundationObject: value)
            } catch {
                throw NotJSON(path: [], problem: "a \(type(of: value)) is not a JSON value")
            }
        }
    }

    private static func convert(members: [String: Any], onBlob: (Blob) throws -> Void) throws -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members {
            do {
                result[key] = try convert(member, onBlob: onBlob)
            } catch var error as NotJSON {
                error.path.append(".\(key)")
                throw error
            }
        }
        return result
    }

    private static func convert(elements: [Any], onBlob: (Blob) throws -> Void) throws -> [JSONValue] {
        var result: [JSONValue] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                result.append(try convert(element, onBlob: onBlob))
            } catch var error as NotJSON {
                error.path.append("[\(index)]")
                throw error
            }
        }
        return result
    }

    /// Converts stored JSON to the values users read: `[String: Any]`, `[Any]`, `String`, `Int`/`Int64`,
    /// `Double`, `Bool`, `NSNull`.
    static func value(from json: JSONValue) -> Any {
        switch json {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .int(let integer): return Int(exactly: integer) ?? integer
        case .double(let number): return number
        case .string(let string): return string
        case .array(let elements): return elements.map(value(from:))
        case .object(let members): return members.mapValues(value(from:))
        }
    }

    /// Whether `json` holds a blob dictionary or `_attachments` anywhere.
    static func containsBlobs(_ json: JSONValue) -> Bool {
        switch json {
        case .object(let members):
            if members["@type"] == "blob" { return true }
            if members["_attachments"] != nil { return true }
            return members.values.contains(where: containsBlobs)
        case .array(let elements): return elements.contains(where: containsBlobs)
        default: return false
        }
    }

    /// The SHA-1 digests of every blob and attachment referenced by `json`.
    static func blobDigests(in json: JSONValue, into digests: inout Set<String>) {
        switch json {
        case .object(let members):
            if members["@type"] == "blob", case .string(let digest)? = members["digest"] { digests.insert(digest) }
            if case .object(let attachments)? = members["_attachments"] {
                for case .object(let meta) in attachments.values {
                    if case .string(let digest)? = meta["digest"] { digests.insert(digest) }
                }
            }
            for member in members.values { blobDigests(in: member, into: &digests) }
        case .array(let elements):
            for element in elements { blobDigests(in: element, into: &digests) }
        default: break
        }
    }
}

// MARK: - Parsing

extension DocumentValues {
    /// The members of a JSON object, for `setJSON`.
    ///
    /// - Parameter what: What is being set, for the error message ("Document", "Dictionary").
    /// - Throws: `.badInput` when the text is not a JSON object.
    static func parseObject(_ json: String, what: String) throws -> [String: Any] {
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: json) } catch { throw CouchetteError.wrap(error) }
        guard case .object(let members) = parsed else {
            throw CouchetteError(.badInput, message: "\(what) JSON must be an object, not \(parsed.typeDescription)")
        }
        return members
    }

    /// The elements of a JSON array, for `setJSON`.
    ///
    /// - Throws: `.badInput` when the text is not a JSON array.
    static func parseArray(_ json: String) throws -> [Any] {
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: json) } catch { throw CouchetteError.wrap(error) }
        guard case .array(let elements) = parsed else {
            throw CouchetteError(.badInput, message: "Array JSON must be an array, not \(parsed.typeDescription)")
        }
        return elements
    }
}
