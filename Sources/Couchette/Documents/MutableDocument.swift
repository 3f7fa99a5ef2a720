import CouchetteCore
import Foundation

/// An editable document; each setter returns `self`, so calls chain.
///
/// Nested arrays and dictionaries read with ``array(forKey:)`` and ``dictionary(forKey:)`` are live
/// ``MutableArrayObject``s and ``MutableDictionaryObject``s: their edits are saved with the document. So are
/// writes through fragments.
///
/// ```swift
/// let list = MutableDocument(id: "user1.\(UUID())")
///     .setString("task-list", forKey: "type")
///     .setString("Groceries", forKey: "name")
///     .setDictionary(MutableDictionaryObject().setString("Alice", forKey: "name"), forKey: "owner")
/// list["owner"]["city"].string = "Paris"
/// try lists.save(document: list)
/// ```
///
/// Thread-safe: the values are guarded by a lock.
public final class MutableDocument: Document, MutableDictionaryProtocol, @unchecked Sendable {
    /// Values as the user set them (nested mutable containers, Blobs and Dates kept until save), or stored JSON;
    /// read and changed through ``values``.
    private var storedValues: [String: Any]

    /// The stored body a document read from its collection was made from, while it is not parsed yet: the
    /// values are its members with ``unparsedEdits`` applied. Setting top-level scalars keeps it unparsed, so
    /// that a save can patch the text (``JSONObjectPatch``); anything else parses it.
    private var unparsedBody: [UInt8]?

    /// Top-level scalars set (or removed, nil) since ``unparsedBody`` was read.
    private var unparsedEdits: [String: JSONValue?] = [:]

    /// The stored revision tree of the revision read or last saved, when known (see ``Document/_storedTree``).
    private var storedTree: [UInt8]?

    /// The values, parsing ``unparsedBody`` first when there is one. Callers hold the lock.
    private var values: [String: Any] {
        get {
            parseUnparsedBody()
            return storedValues
        }
        _modify {
            parseUnparsedBody()
            yield &storedValues
        }
        set {
            unparsedBody = nil
            unparsedEdits = [:]
            storedValues = newValue
        }
    }

    private func parseUnparsedBody() {
        guard let body = unparsedBody else { return }
        var members: [String: Any] = (try? JSONValue(parsing: body))?.objectValue ?? [:]
        for (key, edit) in unparsedEdits {
            if let edit { members[key] = edit } else { members[key] = nil }
        }
        unparsedBody = nil
        unparsedEdits = [:]
        storedValues = members
    }

    /// A new document with a generated ID.
    public convenience init() { self.init(id: nil, data: nil) }

    /// A new document with this ID (generated when nil).
    public convenience init(id: String?) { self.init(id: id, data: nil) }

    /// A new document with a generated ID and these properties.
    public convenience init(data: [String: Any]?) { self.init(id: nil, data: data) }

    /// A new document with this ID (generated when nil) and these properties.
    public init(id: String?, data: [String: Any]?) {
        storedValues = data ?? [:]
        super.init(
            id: id ?? MutableDocument.generateID(), revisionID: nil, sequence: 0, collection: nil, body: [:])
    }

    /// A new document whose properties are parsed from JSON text.
    ///
    /// - Throws: `.badInput` when the text is not a JSON object.
    public convenience init(id: String?, json: String) throws {
        self.init(id: id, data: nil)
        try setJSON(json)
    }

    init(id: String, revisionID: String?, sequence: UInt64, collection: Collection?, members: [String: JSONValue]) {
        storedValues = members
        super.init(id: id, revisionID: revisionID, sequence: sequence, collection: collection, body: members)
    }

    /// A document to edit made from a stored body, parsed only when a value is read or a container set.
    init(
        id: String, revisionID: String?, sequence: UInt64, collection: Collection?, storedBody: [UInt8],
        storedTree: [UInt8]?
    ) {
        storedValues = [:]
        unparsedBody = storedBody
        self.storedTree = storedTree
        super.init(id: id, revisionID: revisionID, sequence: sequence, collection: collection, body: [:])
    }

    /// A random 32-character lowercase hex ID, as Sync Gateway generates.
    static func generateID() -> String {
        RandomHex.make(bytes: 16)
    }

    // MARK: - Reading the edited values

    override func jsonMembers() -> [String: JSONValue] {
        let snapshot = lock.withLock { values }
        var result: [String: JSONValue] = [:]
        for (key, value) in snapshot {
            result[key] = (try? DocumentValues.json(from: value, path: key, onBlob: { _ in })) ?? .null
        }
        return result
    }

    override func jsonMember(forKey key: String) -> JSONValue? {
        lock.withLock { values[key] }.flatMap(MutableValues.json)
    }

    /// The values as set, for saving.
    func editedValues() -> [String: Any] { lock.withLock { values } }

    /// What a save of a document that is still its stored body with top-level scalars set needs: that text
    /// patched (``JSONObjectPatch``), for a save on top of the revision it was read at. Nil otherwise.
    func patchedStoredBody() -> PatchedBody? {
        lock.withLock {
            guard let unparsedBody, let _revisionID else { return nil }
            let edits = unparsedEdits.map { (name: $0.key, value: $0.value) }
            guard let body = edits.isEmpty ? unparsedBody : JSONObjectPatch.applying(edits, to: unparsedBody) else {
                return nil
            }
            return PatchedBody(
                revisionID: _revisionID, sequence: _sequence, storedTree: storedTree, storedBody: unparsedBody,
                body: body)
        }
    }

    /// See ``patchedStoredBody()``.
    struct PatchedBody {
        /// The revision the document was read at (or last saved as), its sequence and its stored tree if known.
        var revisionID: String
        var sequence: UInt64
        var storedTree: [UInt8]?
        /// That revision's body.
        var storedBody: [UInt8]
        /// The body to save.
        var body: [UInt8]
    }

    /// The number of top-level properties.
    public override var count: Int { lock.withLock { values.count } }

    /// The top-level property names, sorted.
    public override var keys: [String] { lock.withLock { Array(values.keys) }.sorted() }

    /// Whether the key is present (even with a null value).
    public override func contains(key: String) -> Bool { lock.withLock { values[key] != nil } }

    /// The value for a key as a Foundation value (dates as ISO-8601 strings, nested containers as `[Any]`
    /// and `[String: Any]`; a `Blob` as set), or nil when the key is missing.
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

    /// The array for a key as a live ``MutableArrayObject``: its edits are the document's (they are saved
    /// with it). Nil when the key is missing or not an array.
    public override func array(forKey key: String) -> MutableArrayObject? {
        lock.withLock { MutableValues.liveArray(in: &values, forKey: key, collection: _collection) }
    }

    /// The dictionary for a key as a live ``MutableDictionaryObject``: its edits are the document's (they are
    /// saved with it). Nil when the key is missing or not a dictionary.
    ///
    /// ```swift
    /// edit.dictionary(forKey: "owner")?.setString("Alice", forKey: "name")
    /// try lists.save(document: edit)
    /// ```
    public override func dictionary(forKey key: String) -> MutableDictionaryObject? {
        lock.withLock { MutableValues.liveDictionary(in: &values, forKey: key, collection: _collection) }
    }

    /// All properties as Foundation values.
    public override func toDictionary() -> [String: Any] {
        lock.withLock { values }.mapValues(MutableValues.foundation)
    }

    /// A copy, nested mutable containers included, with the same ID and revision.
    public override func toMutable() -> MutableDocument {
        let (revisionID, sequence, collection, timestamp, copied) = lock.withLock {
            (_revisionID, _sequence, _collection, _timestamp, values)
        }
        let copy = MutableDocument(id: id, data: copied.mapValues(MutableValues.copy))
        copy.didLoad(revisionID: revisionID, sequence: sequence, collection: collection, timestamp: timestamp)
        return copy
    }

    func didLoad(revisionID: String?, sequence: UInt64, collection: Collection?, timestamp: Date?) {
        lock.withLock {
            _revisionID = revisionID
            _sequence = sequence
            _collection = collection
            _timestamp = timestamp
        }
    }

    // MARK: - Editing

    /// Sets a value: `String`, a number, `Bool`, `Date`, `Blob`, `NSNull`, an array or dictionary (Foundation,
    /// ``ArrayObject`` or ``DictionaryObject``), or nil to remove the key. A value that is not JSON makes the
    /// next save throw `.badInput`. A ``MutableArrayObject`` or ``MutableDictionaryObject`` stays live: edits
    /// made to it before the save are saved.
    @discardableResult
    public func setValue(_ value: Any?, forKey key: String) -> Self {
        lock.withLock {
            if unparsedBody != nil, key.utf8.first != UInt8(ascii: "_"), let scalar = MutableDocument.plainScalar(value) {
                unparsedEdits[key] = scalar
            } else if let value {
                values[key] = value
            } else {
                values[key] = nil
            }
        }
        return self
    }

    private static let stringType = ObjectIdentifier(String.self)
    private static let intType = ObjectIdentifier(Int.self)
    private static let int64Type = ObjectIdentifier(Int64.self)
    private static let boolType = ObjectIdentifier(Bool.self)

    /// A value that can be set without parsing a stored body: a string, an integer, a Boolean as JSON, or
    /// `.some(nil)` for nil (removal); nil for anything else.
    private static func plainScalar(_ value: Any?) -> JSONValue?? {
        guard let value else { return .some(nil) }
        switch ObjectIdentifier(type(of: value)) {
        case stringType: return .string(value as! String)
        case intType: return .int(Int64(value as! Int))
        case int64Type: return .int(value as! Int64)
        case boolType: return .bool(value as! Bool)
        default: return nil
        }
    }

    /// Sets a Foundation array, or removes the key when nil. (The other typed setters come from
    /// ``MutableDictionaryProtocol``.)
    @_disfavoredOverload
    @discardableResult public func setArray(_ value: [Any]?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a Foundation dictionary, or removes the key when nil.
    @_disfavoredOverload
    @discardableResult public func setDictionary(_ value: [String: Any]?, forKey key: String) -> Self {
        setValue(value, forKey: key)
    }

    /// Replaces every property (nil removes them all).
    @discardableResult
    public func setData(_ data: [String: Any]?) -> Self {
        lock.withLock { values = data ?? [:] }
        return self
    }

    /// Replaces every property with those parsed from JSON text.
    ///
    /// - Throws: `.badInput` when the text is not a JSON object.
    @discardableResult
    public func setJSON(_ json: String) throws -> Self {
        let members = try DocumentValues.parseObject(json, what: "Document")
        lock.withLock { values = members }
        return self
    }

    /// The mutable fragment for a key, for chained reads and writes: `doc["owner"]["name"].string = "Alice"`.
    public override subscript(key: String) -> MutableFragment { MutableFragment(.key(key, in: self)) }

    /// Sets a value with subscript syntax: `doc["name"] = "Groceries"` (nil removes the key), as before
    /// fragments existed. Reading `doc["name"]` gives the ``MutableFragment``; read the value with
    /// `doc["name"].value` or a typed getter.
    @_disfavoredOverload
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    // MARK: - After a save

    /// Takes the saved body as the document's values. Live nested containers the user may still hold stay in
    /// place (with the saved content), so editing them and saving again works.
    func didSave(
        revisionID: String, sequence: UInt64, collection: Collection, members: [String: JSONValue], timestamp: Date?
    ) {
        lock.withLock {
            _revisionID = revisionID
            _sequence = sequence
            _collection = collection
            _timestamp = timestamp
            storedTree = nil
            values = MutableValues.rebased(values, to: members, collection: collection)
        }
    }

    /// Takes a saved body that was patched from the stored one (``patchedStoredBody()``) as the new stored body.
    func didSave(
        revisionID: String, sequence: UInt64, collection: Collection, storedBody: [UInt8], storedTree: [UInt8]?,
        timestamp: Date?
    ) {
        lock.withLock {
            self.storedTree = storedTree
            _revisionID = revisionID
            _sequence = sequence
            _collection = collection
            _timestamp = timestamp
            storedValues = [:]
            unparsedBody = storedBody
            unparsedEdits = [:]
        }
    }
}

/// How a save or delete treats a document that changed since it was read.
public enum ConcurrencyControl: UInt8, Sendable {
    /// Overwrite the newer revision.
    case lastWriteWins
    /// Give up: the call returns false.
    case failOnConflict
}
