import CouchetteCore
import Foundation

/// An editable JSON object (Couchbase Lite 3 `MutableDictionaryObject`); each setter returns `self`, so calls
/// chain.
///
/// Set one into a document with `setDictionary(_:forKey:)`; it is
/// converted to JSON when the document is saved. A dictionary read from a mutable document with
/// ``MutableDocument/dictionary(forKey:)`` is live: its edits are the document's.
///
/// ```swift
/// let address = MutableDictionaryObject().setString("Paris", forKey: "city")
/// try lists.save(document: MutableDocument(id: "l1").setDictionary(address, forKey: "address"))
/// let edit = try lists.document(id: "l1")!.toMutable()
/// edit.dictionary(forKey: "address")?.setString("Lyon", forKey: "city")
/// try lists.save(document: edit)
/// ```
///
/// Thread-safe: the values are guarded by a lock.
public final class MutableDictionaryObject: DictionaryObject, MutableDictionaryProtocol, @unchecked Sendable {
    private let lock = NSLock()
    /// Values as set (nested mutable containers, Blobs and Dates kept until save), or stored JSON.
    private var values: [String: Any]
    private var _collection: Collection?

    /// A new empty dictionary.
    public convenience init() { self.init(values: [:], collection: nil) }

    /// A new dictionary with these entries: JSON values (`String`, numbers, `Bool`, `NSNull`), `Date`,
    /// `Blob`, arrays and dictionaries (Foundation, ``ArrayObject`` or ``DictionaryObject``) of these.
    public convenience init(data: [String: Any]?) { self.init(values: data ?? [:], collection: nil) }

    /// A new dictionary with the entries of a JSON object.
    ///
    /// - Throws: `.badInput` when the text is not a JSON object.
    public convenience init(json: String) throws {
        self.init(values: [:], collection: nil)
        try setJSON(json)
    }

    init(values: [String: Any], collection: Collection?) {
        self.values = values
        self._collection = collection
        super.init(members: [:], collection: nil)
    }

    // MARK: - Storage

    override var collection: Collection? { lock.withLock { _collection } }

    override func jsonMembers() -> [String: JSONValue] {
        snapshot().compactMapValues(MutableValues.json)
    }

    override func jsonMember(forKey key: String) -> JSONValue? {
        lock.withLock { values[key] }.flatMap(MutableValues.json)
    }

    /// The values as set, for conversion to JSON.
    func snapshot() -> [String: Any] { lock.withLock { values } }

    /// After the document holding this dictionary was saved: takes the saved JSON, keeping nested live
    /// containers.
    func rebase(to members: [String: JSONValue], collection: Collection?) {
        lock.withLock {
            values = MutableValues.rebased(values, to: members, collection: collection)
            _collection = collection
        }
    }

    // MARK: - Reading

    /// The number of entries.
    public override var count: Int { lock.withLock { values.count } }

    /// The keys, sorted.
    public override var keys: [String] { lock.withLock { Array(values.keys) }.sorted() }

    /// Whether the key is present (even with a null value).
    public override func contains(key: String) -> Bool { lock.withLock { values[key] != nil } }

    /// The value for a key as a Foundation value (dates as ISO-8601 strings; a `Blob` as set), or nil.
    public override func value(forKey key: String) -> Any? {
        lock.withLock { values[key] }.map(MutableValues.foundation)
    }

    /// The blob for a key (as set, or read from a blob dictionary), or nil.
    public override func blob(forKey key: String) -> Blob? {
        if let blob = lock.withLock({ values[key] }) as? Blob { return blob }
        return super.blob(forKey: key)
    }

    /// The date for a key (as set, or parsed from an ISO-8601 string), or nil.
    public override func date(forKey key: String) -> Date? {
        if let date = lock.withLock({ values[key] }) as? Date { return date }
        return super.date(forKey: key)
    }

    /// The array for a key as a live ``MutableArrayObject`` whose edits are this dictionary's, or nil.
    public override func array(forKey key: String) -> MutableArrayObject? {
        lock.withLock { MutableValues.liveArray(in: &values, forKey: key, collection: _collection) }
    }

    /// The dictionary for a key as a live ``MutableDictionaryObject`` whose edits are this dictionary's,
    /// or nil.
    public override func dictionary(forKey key: String) -> MutableDictionaryObject? {
        lock.withLock { MutableValues.liveDictionary(in: &values, forKey: key, collection: _collection) }
    }

    /// All entries as Foundation values.
    public override func toDictionary() -> [String: Any] { snapshot().mapValues(MutableValues.foundation) }

    /// A deep copy.
    public override func toMutable() -> MutableDictionaryObject {
        MutableDictionaryObject(values: snapshot().mapValues(MutableValues.copy), collection: collection)
    }

    /// The mutable fragment for a key: `owner["address"]["city"].string = "Lyon"`.
    public override subscript(key: String) -> MutableFragment { MutableFragment(.key(key, in: self)) }

    /// Sets a value with subscript syntax: `owner["name"] = "Alice"` (nil removes the key). Reading
    /// `owner["name"]` gives the ``MutableFragment``; read the value with `owner["name"].value`.
    @_disfavoredOverload
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    // MARK: - Editing

    /// Sets a value: `String`, a number, `Bool`, `Date`, `Blob`, `NSNull`, an array or dictionary (Foundation,
    /// ``ArrayObject`` or ``DictionaryObject``), or nil to remove the key. A value that is not JSON makes
    /// the save of the document holding it throw `.badInput`.
    @discardableResult
    public func setValue(_ value: Any?, forKey key: String) -> Self {
        lock.withLock {
            if let value { values[key] = value } else { values[key] = nil }
        }
        return self
    }

    /// Replaces every entry (nil empties the dictionary).
    @discardableResult
    public func setData(_ data: [String: Any]?) -> Self {
        lock.withLock { values = data ?? [:] }
        return self
    }

    /// Replaces every entry with those parsed from a JSON object.
    ///
    /// - Throws: `.badInput` when the text is not a JSON object.
    @discardableResult
    public func setJSON(_ json: String) throws -> Self {
        let members = try DocumentValues.parseObject(json, what: "Dictionary")
        lock.withLock { values = members }
        return self
    }
}
