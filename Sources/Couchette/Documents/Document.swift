import CouchetteCore
import Foundation

/// An immutable snapshot of one revision of a document.
///
/// Read it with typed getters or fragments; edit a copy with ``toMutable()``. Nested arrays and dictionaries
/// read as ``ArrayObject`` and ``DictionaryObject``.
///
/// ```swift
/// if let list = try lists.document(id: "user1.123") {
///     print(list.string(forKey: "name") ?? "", list["owner"]["name"].string ?? "", list.revisionID ?? "")
/// }
/// ```
public class Document: DictionaryProtocol, Sequence, Hashable, @unchecked Sendable {
    /// The document's ID.
    public let id: String
    let lock = NSLock()
    var _revisionID: String?
    var _sequence: UInt64
    var _collection: Collection?
    var _timestamp: Date?
    /// The stored JSON, parsed on first use.
    private var _rawBody: [UInt8]?
    private var _body: [String: JSONValue]?
    /// The stored revision tree as read with the revision, when the revision has no blobs and no conflict: an
    /// edited copy is then saved without reading the document again (see ``MutableDocument``).
    var _storedTree: [UInt8]?

    init(
        id: String, revisionID: String?, sequence: UInt64, collection: Collection?, rawBody: [UInt8]?,
        timestamp: Date? = nil, storedTree: [UInt8]? = nil
    ) {
        self._storedTree = storedTree
        self.id = id
        self._revisionID = revisionID
        self._sequence = sequence
        self._collection = collection
        self._timestamp = timestamp
        self._rawBody = rawBody
        self._body = rawBody == nil ? [:] : nil
    }

    init(id: String, revisionID: String?, sequence: UInt64, collection: Collection?, body: [String: JSONValue]) {
        self.id = id
        self._revisionID = revisionID
        self._sequence = sequence
        self._collection = collection
        self._body = body
    }

    /// The current revision's ID, `"<generation>-<digest>"`; nil before the first save.
    public var revisionID: String? { lock.withLock { _revisionID } }

    /// The sequence of the save that made this revision; 0 before the first save.
    public var sequence: UInt64 { lock.withLock { _sequence } }

    /// The collection the document was read from or saved to.
    public var collection: Collection? { lock.withLock { _collection } }

    /// When this database last stored a revision of the document (a save here or a replicated revision); nil
    /// before the first save, and for documents last written by a Couchette older than schema 4.
    public var timestamp: Date? { lock.withLock { _timestamp } }

    /// A mutable copy.
    public func toMutable() -> MutableDocument {
        lock.withLock {
            let copy =
                if _body == nil, let _rawBody {
                    // Not parsed yet: the copy parses it when needed, or patches it when saved.
                    MutableDocument(
                        id: id, revisionID: _revisionID, sequence: _sequence, collection: _collection,
                        storedBody: _rawBody, storedTree: _storedTree)
                } else {
                    MutableDocument(
                        id: id, revisionID: _revisionID, sequence: _sequence, collection: _collection,
                        members: bodyLocked())
                }
            // Not shared yet: no need for its lock.
            copy._timestamp = _timestamp
            return copy
        }
    }

    // MARK: - Reading

    /// The stored members as JSON.
    func jsonMembers() -> [String: JSONValue] {
        lock.withLock { bodyLocked() }
    }

    private func bodyLocked() -> [String: JSONValue] {
        if let _body { return _body }
        let parsed = (try? JSONValue(parsing: _rawBody ?? []))?.objectValue ?? [:]
        _body = parsed
        _rawBody = nil
        return parsed
    }

    /// One member as JSON, or nil when missing (or, in a mutable document, not JSON).
    func jsonMember(forKey key: String) -> JSONValue? { jsonMembers()[key] }

    /// The value for a key: `String`, a number, `Bool`, `[Any]`, `[String: Any]`, `NSNull` for JSON null,
    /// or nil when the key is missing. Use ``array(forKey:)`` and ``dictionary(forKey:)`` for containers
    /// you want to read with typed getters.
    public func value(forKey key: String) -> Any? {
        jsonMember(forKey: key).map(DocumentValues.value(from:))
    }

    /// The number of top-level properties.
    public var count: Int { jsonMembers().count }

    /// The top-level property names, sorted.
    public var keys: [String] { jsonMembers().keys.sorted() }

    /// Whether the key is present (even with a null value).
    public func contains(key: String) -> Bool { jsonMember(forKey: key) != nil }

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

    /// The array for a key, or nil when missing or not an array.
    public func array(forKey key: String) -> ArrayObject? {
        guard case .array(let elements)? = jsonMember(forKey: key) else { return nil }
        return ArrayObject(elements: elements, collection: collection)
    }

    /// The dictionary for a key, or nil when missing or not a dictionary. A blob is stored as a dictionary
    /// too (its metadata); read it with ``blob(forKey:)``.
    public func dictionary(forKey key: String) -> DictionaryObject? {
        guard case .object(let members)? = jsonMember(forKey: key) else { return nil }
        return DictionaryObject(members: members, collection: collection)
    }

    /// The blob for a key (a Couchbase Lite 3 blob dictionary), or nil.
    public func blob(forKey key: String) -> Blob? {
        DocumentValues.blob(jsonMember(forKey: key), collection: collection)
    }

    /// The fragment for a key, for chained reads: `list["owner"]["name"].string`, `list["tags"][1].string`.
    public subscript(key: String) -> Fragment { Fragment(.key(key, in: self)) }

    /// All properties as Foundation values.
    public func toDictionary() -> [String: Any] {
        jsonMembers().mapValues(DocumentValues.value(from:))
    }

    /// The properties as JSON text (keys sorted).
    public func toJSON() -> String {
        JSONValue.object(jsonMembers()).serializedString()
    }

    /// The properties as a JSON value.
    public func toJSONValue() -> JSONValue { .object(jsonMembers()) }

    /// Iterates over the property names.
    public func makeIterator() -> IndexingIterator<[String]> { keys.makeIterator() }

    // MARK: - Hashable

    public static func == (lhs: Document, rhs: Document) -> Bool {
        lhs === rhs
            || (lhs.id == rhs.id && lhs.revisionID == rhs.revisionID && lhs.collection == rhs.collection
                && lhs.jsonMembers() == rhs.jsonMembers())
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(revisionID)
    }
}
