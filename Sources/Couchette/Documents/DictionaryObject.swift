import CouchetteCore
import Foundation

/// An immutable JSON object inside a document (Couchbase Lite 3 `DictionaryObject`).
///
/// Read it with typed getters or fragments; edit a copy with ``toMutable()``. Iterating yields the keys,
/// sorted.
///
/// ```swift
/// if let owner = list.dictionary(forKey: "owner") {
///     print(owner.string(forKey: "name") ?? "", owner["address"]["city"].string ?? "")
/// }
/// ```
public class DictionaryObject: DictionaryProtocol, Sequence, Hashable, @unchecked Sendable {
    /// The stored members (empty in a ``MutableDictionaryObject``, which keeps its own values).
    private let members: [String: JSONValue]
    /// The collection whose database holds the blobs this dictionary refers to.
    private let origin: Collection?

    init(members: [String: JSONValue], collection: Collection?) {
        self.members = members
        self.origin = collection
    }

    // MARK: - Storage (overridden by the mutable subclass)

    /// The collection whose database holds the blobs this dictionary refers to.
    var collection: Collection? { origin }

    /// The members as JSON.
    func jsonMembers() -> [String: JSONValue] { members }

    /// One member as JSON, or nil when missing (or, in a mutable dictionary, not JSON).
    func jsonMember(forKey key: String) -> JSONValue? { members[key] }

    // MARK: - Reading

    /// The number of entries.
    public var count: Int { members.count }

    /// The keys, sorted.
    public var keys: [String] { members.keys.sorted() }

    /// Whether the key is present (even with a null value).
    public func contains(key: String) -> Bool { members[key] != nil }

    /// The value for a key: `String`, a number, `Bool`, `[Any]`, `[String: Any]`, `NSNull` for JSON null,
    /// or nil when the key is missing. Use ``array(forKey:)`` and ``dictionary(forKey:)`` for containers
    /// you want to read with typed getters.
    public func value(forKey key: String) -> Any? { members[key].map(DocumentValues.value(from:)) }

    /// The string for a key, or nil when missing or not a string.
    public func string(forKey key: String) -> String? { jsonMember(forKey: key)?.stringValue }

    /// The number for a key as an `Int` (truncated; a Boolean is 1 or 0), or 0.
    public func int(forKey key: String) -> Int { DocumentValues.int(jsonMember(forKey: key)) }

    /// The number for a key as an `Int64` (exact for integers), or 0.
    public func int64(forKey key: String) -> Int64 { DocumentValues.int64(jsonMember(forKey: key)) }

    /// The number for a key as a `Double`, or 0.
    public func double(forKey key: String) -> Double { DocumentValues.double(jsonMember(forKey: key)) }

    /// The number for a key as a `Float`, or 0.
    public func float(forKey key: String) -> Float { Float(double(forKey: key)) }

    /// The number for a key, or nil when missing or not a number.
    public func number(forKey key: String) -> NSNumber? { DocumentValues.number(jsonMember(forKey: key)) }

    /// The Boolean for a key: a Boolean, or a non-zero number; false otherwise.
    public func boolean(forKey key: String) -> Bool { DocumentValues.boolean(jsonMember(forKey: key)) }

    /// The date for a key stored as an ISO-8601 string, or nil.
    public func date(forKey key: String) -> Date? { DocumentValues.date(jsonMember(forKey: key)) }

    /// The blob for a key (a blob dictionary), or nil.
    public func blob(forKey key: String) -> Blob? {
        DocumentValues.blob(jsonMember(forKey: key), collection: collection)
    }

    /// The array for a key, or nil when missing or not an array.
    public func array(forKey key: String) -> ArrayObject? {
        guard case .array(let elements)? = jsonMember(forKey: key) else { return nil }
        return ArrayObject(elements: elements, collection: collection)
    }

    /// The dictionary for a key, or nil when missing or not a dictionary.
    public func dictionary(forKey key: String) -> DictionaryObject? {
        guard case .object(let members)? = jsonMember(forKey: key) else { return nil }
        return DictionaryObject(members: members, collection: collection)
    }

    /// The fragment for a key, for chained reads: `owner["address"]["city"].string`.
    public subscript(key: String) -> Fragment { Fragment(.key(key, in: self)) }

    /// All entries as Foundation values.
    public func toDictionary() -> [String: Any] { members.mapValues(DocumentValues.value(from:)) }

    /// The entries as JSON text, keys sorted.
    public func toJSON() -> String { JSONValue.object(jsonMembers()).serializedString() }

    /// A mutable copy.
    public func toMutable() -> MutableDictionaryObject {
        MutableDictionaryObject(values: members, collection: collection)
    }

    /// Iterates over the keys, sorted.
    public func makeIterator() -> IndexingIterator<[String]> { keys.makeIterator() }

    // MARK: - Hashable

    /// Whether two dictionaries hold the same JSON.
    public static func == (lhs: DictionaryObject, rhs: DictionaryObject) -> Bool {
        lhs === rhs || lhs.jsonMembers() == rhs.jsonMembers()
    }

    /// Hashes the JSON content.
    public func hash(into hasher: inout Hasher) { hasher.combine(jsonMembers()) }
}
