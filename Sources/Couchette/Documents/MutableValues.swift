import CouchetteCore
import Foundation

/// What the mutable containers (``MutableDocument``, ``MutableDictionaryObject``, ``MutableArrayObject``)
/// share about the values they hold.
///
/// A mutable container keeps each value as it was set (or as stored JSON, a ``JSONValue``), converting to
/// JSON only on save or when read through a typed getter. Reading a nested array or dictionary through a
/// mutable container's `array`/`dictionary` getter turns it into a live mutable container stored back in
/// place, so its edits are the parent's.
enum MutableValues {
    /// One value as JSON for a typed getter, or nil when it is not JSON.
    static func json(_ value: Any) -> JSONValue? {
        if let json = value as? JSONValue { return json }
        return try? DocumentValues.json(from: value, path: "", onBlob: { _ in })
    }

    /// The live mutable dictionary a value holds: the value itself when it is one, else a new one made from
    /// a stored, immutable or Foundation dictionary (`replaced` tells the caller to store it back); nil
    /// when the value is not a dictionary.
    static func liveDictionary(_ value: Any?, collection: Collection?) -> (MutableDictionaryObject, replaced: Bool)? {
        switch value {
        case let dictionary as MutableDictionaryObject: return (dictionary, false)
        case let dictionary as DictionaryObject: return (dictionary.toMutable(), true)
        case .object(let members) as JSONValue:
            return (MutableDictionaryObject(values: members, collection: collection), true)
        case let members as [String: Any]: return (MutableDictionaryObject(values: members, collection: collection), true)
        default: return nil
        }
    }

    /// The live mutable array a value holds; see ``liveDictionary(_:collection:)``.
    static func liveArray(_ value: Any?, collection: Collection?) -> (MutableArrayObject, replaced: Bool)? {
        switch value {
        case let array as MutableArrayObject: return (array, false)
        case let array as ArrayObject: return (array.toMutable(), true)
        case .array(let elements) as JSONValue: return (MutableArrayObject(values: elements, collection: collection), true)
        case let elements as [Any]: return (MutableArrayObject(values: elements, collection: collection), true)
        default: return nil
        }
    }

    /// A value as the getters return it: Foundation containers (`[Any]`, `[String: Any]`), dates as ISO-8601
    /// strings, JSON as Foundation values; blobs and scalars unchanged.
    static func foundation(_ value: Any) -> Any {
        switch value {
        case is String, is Int, is Double, is Bool, is Blob, is NSNull: return value
        case let json as JSONValue: return DocumentValues.value(from: json)
        case let date as Date: return DocumentValues.string(from: date)
        case let array as ArrayObject: return array.toArray()
        case let dictionary as DictionaryObject: return dictionary.toDictionary()
        case let elements as [Any]: return elements.map(foundation)
        case let members as [String: Any]: return members.mapValues(foundation)
        default: return value
        }
    }

    /// A deep copy of a value: mutable containers (also inside Foundation ones) are copied, the rest is shared
    /// (immutable).
    static func copy(_ value: Any) -> Any {
        switch value {
        case is String, is Int, is Double, is Bool, is JSONValue: return value
        case let array as MutableArrayObject: return array.toMutable()
        case let dictionary as MutableDictionaryObject: return dictionary.toMutable()
        case let elements as [Any]: return elements.map(copy)
        case let members as [String: Any]: return members.mapValues(copy)
        default: return value
        }
    }

    /// The value to keep after a save stored `json` for a slot that held `old`: a live mutable container of
    /// the same kind stays (its content replaced by the saved JSON, so references the user holds still edit
    /// the document); anything else becomes the saved JSON.
    static func rebased(_ old: @autoclosure () -> Any?, to json: JSONValue, collection: Collection?) -> Any {
        // Look at the JSON first: most saved values are scalars, for which the old value is not even looked up
        // (this runs on every save).
        switch json {
        case .object(let members):
            if let dictionary = old() as? MutableDictionaryObject {
                dictionary.rebase(to: members, collection: collection)
                return dictionary
            }
        case .array(let elements):
            if let array = old() as? MutableArrayObject {
                array.rebase(to: elements, collection: collection)
                return array
            }
        default: break
        }
        return json
    }

    // MARK: - Keyed slots (MutableDocument and MutableDictionaryObject)

    /// The live mutable array at `key` of `values`, storing it back when it had to be made.
    static func liveArray(in values: inout [String: Any], forKey key: String, collection: Collection?) -> MutableArrayObject? {
        guard let live = liveArray(values[key], collection: collection) else { return nil }
        if live.replaced { values[key] = live.0 }
        return live.0
    }

    /// The live mutable dictionary at `key` of `values`, storing it back when it had to be made.
    static func liveDictionary(
        in values: inout [String: Any], forKey key: String, collection: Collection?
    ) -> MutableDictionaryObject? {
        guard let live = liveDictionary(values[key], collection: collection) else { return nil }
        if live.replaced { values[key] = live.0 }
        return live.0
    }

    private static let mutableDictionaryType = ObjectIdentifier(MutableDictionaryObject.self)
    private static let mutableArrayType = ObjectIdentifier(MutableArrayObject.self)

    /// The values to keep after a save stored `members`: live nested containers are rebased onto the saved
    /// JSON; without any (the common case, on every save) the saved members simply become the values.
    static func rebased(_ values: [String: Any], to members: [String: JSONValue], collection: Collection?) -> [String: Any] {
        let hasLiveContainers = values.values.contains { value in
            let type = ObjectIdentifier(type(of: value))
            return type == mutableDictionaryType || type == mutableArrayType
        }
        guard hasLiveContainers else { return members }
        var next: [String: Any] = [:]
        next.reserveCapacity(members.count)
        for (key, json) in members {
            next[key] = rebased(values[key], to: json, collection: collection)
        }
        return next
    }
}
