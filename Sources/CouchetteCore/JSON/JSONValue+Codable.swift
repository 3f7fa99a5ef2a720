import Foundation

// MARK: - Codable

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .int(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else if let members = try? container.decode([String: JSONValue].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let integer): try container.encode(integer)
        case .double(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }

    /// The JSON form of any `Encodable` value.
    ///
    /// ```swift
    /// struct Task: Codable { var title: String; var complete: Bool }
    /// let json = try JSONValue(encoding: Task(title: "Milk", complete: false))   // {"complete":false,"title":"Milk"}
    /// ```
    /// - Throws: The encoder's error, or ``CoreError`` if the encoded form cannot be read back.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONValue(parsing: data)
    }

    /// Decodes a `Decodable` type from this JSON.
    ///
    /// - Throws: `DecodingError` when the JSON does not match the type.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(type, from: Data(serialized()))
    }
}

// MARK: - Foundation objects

extension JSONValue {
    /// Converts Foundation property-list style values (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `Bool`,
    /// `Int`, `Double`, `NSNull`, `nil`) into JSON.
    ///
    /// - Throws: ``CoreError`` `.invalidJSON` naming the first value that is not JSON.
    public init(foundationObject object: Any?) throws(CoreError) {
        if let object, let value = try Self.exactSwiftValue(object) {
            self = value
            return
        }
        switch object {
        case nil, is NSNull: self = .null
        case let value as JSONValue: self = value
        case let string as String: self = .string(string)
        case let flag as Bool where type(of: object!) == Bool.self: self = .bool(flag)
        case let integer as Int: self = .int(Int64(integer))
        case let integer as Int64: self = .int(integer)
        case let integer as Int32: self = .int(Int64(integer))
        case let number as Double: self = .double(number)
        case let number as Float: self = .double(Double(number))
        case let number as NSNumber: self = JSONValue.fromNumber(number)
        case let elements as [Any?]:
            self = .array(try elements.map { element throws(CoreError) in try JSONValue(foundationObject: element) })
        case let members as [String: Any?]:
            var converted: [String: JSONValue] = [:]
            converted.reserveCapacity(members.count)
            for (key, member) in members { converted[key] = try JSONValue(foundationObject: member) }
            self = .object(converted)
        default:
            throw CoreError(.invalidJSON, "A value of type \(type(of: object!)) is not JSON")
        }
    }

    /// The common Swift types by their exact type, before the casts below: on Linux a cast of a Swift dictionary or
    /// array to `NSNull` or `NSNumber` bridges (copies) it before failing, which cost more than the conversion.
    private static func exactSwiftValue(_ object: Any) throws(CoreError) -> JSONValue? {
        switch ObjectIdentifier(type(of: object)) {
        case ObjectIdentifier(String.self): return .string(object as! String)
        case ObjectIdentifier(Int.self): return .int(Int64(object as! Int))
        case ObjectIdentifier(Bool.self): return .bool(object as! Bool)
        case ObjectIdentifier(Double.self): return .double(object as! Double)
        case ObjectIdentifier(JSONValue.self): return (object as! JSONValue)
        case ObjectIdentifier([String: Any].self):
            let members = object as! [String: Any]
            var converted: [String: JSONValue] = [:]
            converted.reserveCapacity(members.count)
            for (key, member) in members { converted[key] = try JSONValue(foundationObject: member) }
            return .object(converted)
        case ObjectIdentifier([Any].self):
            return .array(try (object as! [Any]).map { element throws(CoreError) in try JSONValue(foundationObject: element) })
        default:
            return nil
        }
    }

    /// The value as Foundation objects (`[String: Any]`, `[Any]`, `String`, `Int64`, `Double`, `Bool`, `NSNull`).
    public var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let flag): flag
        case .int(let integer): integer
        case .double(let number): number
        case .string(let string): string
        case .array(let elements): elements.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }

    private static func fromNumber(_ number: NSNumber) -> JSONValue {
        let type = UInt8(bitPattern: number.objCType.pointee)
        switch type {
        case UInt8(ascii: "c") where number.int64Value == 0 || number.int64Value == 1: return .bool(number.boolValue)
        case UInt8(ascii: "f"), UInt8(ascii: "d"): return .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"):
            if let exact = Int64(exactly: number.uint64Value) { return .int(exact) }
            return .double(number.doubleValue)
        default: return .int(number.int64Value)
        }
    }
}
