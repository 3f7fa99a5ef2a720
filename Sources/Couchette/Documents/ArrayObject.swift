import CouchetteCore
import Foundation

/// An immutable JSON array inside a document (Couchbase Lite 3 `ArrayObject`).
///
/// Read it with typed getters or fragments; edit a copy with ``toMutable()``. Iterating yields the elements
/// as ``value(at:)`` returns them.
///
/// ```swift
/// if let tags = task.array(forKey: "tags") {
///     for index in 0..<tags.count { print(tags.string(at: index) ?? "") }
/// }
/// ```
public class ArrayObject: ArrayProtocol, Sequence, Hashable, @unchecked Sendable {
    /// The stored elements (empty in a ``MutableArrayObject``, which keeps its own values).
    private let elements: [JSONValue]
    /// The collection whose database holds the blobs this array refers to.
    private let origin: Collection?

    init(elements: [JSONValue], collection: Collection?) {
        self.elements = elements
        self.origin = collection
    }

    // MARK: - Storage (overridden by the mutable subclass)

    /// The collection whose database holds the blobs this array refers to.
    var collection: Collection? { origin }

    /// The elements as JSON.
    func jsonElements() -> [JSONValue] { elements }

    /// One element as JSON, or nil when the index is out of range (or, in a mutable array, the element is
    /// not JSON).
    func jsonElement(at index: Int) -> JSONValue? {
        elements.indices.contains(index) ? elements[index] : nil
    }

    // MARK: - Reading

    /// The number of elements.
    public var count: Int { elements.count }

    /// The element at an index: `String`, a number, `Bool`, `[Any]`, `[String: Any]`, `NSNull` for JSON
    /// null, or nil when the index is out of range. Use ``array(at:)`` and ``dictionary(at:)`` for
    /// containers you want to read with typed getters.
    public func value(at index: Int) -> Any? { jsonElement(at: index).map(DocumentValues.value(from:)) }

    /// The string at an index, or nil when out of range or not a string.
    public func string(at index: Int) -> String? { jsonElement(at: index)?.stringValue }

    /// The number at an index as an `Int` (truncated; a Boolean is 1 or 0), or 0.
    public func int(at index: Int) -> Int { DocumentValues.int(jsonElement(at: index)) }

    /// The number at an index as an `Int64` (exact for integers), or 0.
    public func int64(at index: Int) -> Int64 { DocumentValues.int64(jsonElement(at: index)) }

    /// The number at an index as a `Double`, or 0.
    public func double(at index: Int) -> Double { DocumentValues.double(jsonElement(at: index)) }

    /// The number at an index as a `Float`, or 0.
    public func float(at index: Int) -> Float { Float(double(at: index)) }

    /// The number at an index, or nil when out of range or not a number.
    public func number(at index: Int) -> NSNumber? { DocumentValues.number(jsonElement(at: index)) }

    /// The Boolean at an index: a Boolean, or a non-zero number; false otherwise.
    public func boolean(at index: Int) -> Bool { DocumentValues.boolean(jsonElement(at: index)) }

    /// The date at an index stored as an ISO-8601 string, or nil.
    public func date(at index: Int) -> Date? { DocumentValues.date(jsonElement(at: index)) }

    /// The blob at an index (a blob dictionary), or nil.
    public func blob(at index: Int) -> Blob? {
        DocumentValues.blob(jsonElement(at: index), collection: collection)
    }

    /// The array at an index, or nil when out of range or not an array.
    public func array(at index: Int) -> ArrayObject? {
        guard case .array(let elements)? = jsonElement(at: index) else { return nil }
        return ArrayObject(elements: elements, collection: collection)
    }

    /// The dictionary at an index, or nil when out of range or not a dictionary.
    public func dictionary(at index: Int) -> DictionaryObject? {
        guard case .object(let members)? = jsonElement(at: index) else { return nil }
        return DictionaryObject(members: members, collection: collection)
    }

    /// The fragment for an index, for chained reads: `tags[0]["label"].string`.
    public subscript(index: Int) -> Fragment { Fragment(.index(index, in: self)) }

    /// All elements as Foundation values.
    public func toArray() -> [Any] { elements.map(DocumentValues.value(from:)) }

    /// The elements as JSON text (object keys sorted).
    public func toJSON() -> String { JSONValue.array(jsonElements()).serializedString() }

    /// A mutable copy.
    public func toMutable() -> MutableArrayObject {
        MutableArrayObject(values: elements, collection: collection)
    }

    /// Iterates over the elements as Foundation values.
    public func makeIterator() -> IndexingIterator<[Any]> { toArray().makeIterator() }

    // MARK: - Hashable

    /// Whether two arrays hold the same JSON.
    public static func == (lhs: ArrayObject, rhs: ArrayObject) -> Bool {
        lhs === rhs || lhs.jsonElements() == rhs.jsonElements()
    }

    /// Hashes the JSON content.
    public func hash(into hasher: inout Hasher) { hasher.combine(jsonElements()) }
}
