import CouchetteCore
import Foundation

/// An editable JSON array (Couchbase Lite 3 `MutableArrayObject`); each method returns `self`, so calls chain.
///
/// Set one into a document with `setArray(_:forKey:)`; it is converted to JSON when the document is saved.
/// An array read from a mutable document with ``MutableDocument/array(forKey:)`` is live: its edits are the
/// document's. An index out of range in a setter, an insertion or a removal is a programming error and traps,
/// as with Swift arrays; getters return nil or 0 instead.
///
/// ```swift
/// let tags = MutableArrayObject().addString("home").addString("urgent")
/// try tasks.save(document: MutableDocument(id: "t1").setArray(tags, forKey: "tags"))
/// ```
///
/// Thread-safe: the elements are guarded by a lock.
public final class MutableArrayObject: ArrayObject, MutableArrayProtocol, @unchecked Sendable {
    private let lock = NSLock()
    /// Elements as set (nested mutable containers, Blobs and Dates kept until save), or stored JSON.
    private var values: [Any]
    private var _collection: Collection?

    /// A new empty array.
    public convenience init() { self.init(values: [], collection: nil) }

    /// A new array with these elements: JSON values (`String`, numbers, `Bool`, `NSNull`), `Date`, `Blob`,
    /// arrays and dictionaries (Foundation, ``ArrayObject`` or ``DictionaryObject``) of these.
    public convenience init(data: [Any]?) { self.init(values: data ?? [], collection: nil) }

    /// A new array with the elements of a JSON array.
    ///
    /// - Throws: `.badInput` when the text is not a JSON array.
    public convenience init(json: String) throws {
        self.init(values: [], collection: nil)
        try setJSON(json)
    }

    init(values: [Any], collection: Collection?) {
        self.values = values
        self._collection = collection
        super.init(elements: [], collection: nil)
    }

    // MARK: - Storage

    override var collection: Collection? { lock.withLock { _collection } }

    override func jsonElements() -> [JSONValue] {
        snapshot().map { MutableValues.json($0) ?? .null }
    }

    override func jsonElement(at index: Int) -> JSONValue? {
        element(at: index).flatMap(MutableValues.json)
    }

    /// The elements as set, for conversion to JSON.
    func snapshot() -> [Any] { lock.withLock { values } }

    private func element(at index: Int) -> Any? {
        lock.withLock { values.indices.contains(index) ? values[index] : nil }
    }

    /// After the document holding this array was saved: takes the saved JSON, keeping nested live containers.
    func rebase(to elements: [JSONValue], collection: Collection?) {
        lock.withLock {
            values = elements.enumerated().map { index, json in
                MutableValues.rebased(
                    values.indices.contains(index) ? values[index] : nil, to: json, collection: collection)
            }
            _collection = collection
        }
    }

    /// Sets the element at an index if it exists (a fragment's write, which must not trap).
    func setValueIfPresent(_ value: Any?, at index: Int) {
        lock.withLock {
            if values.indices.contains(index) { values[index] = value ?? NSNull() }
        }
    }

    // MARK: - Reading

    /// The number of elements.
    public override var count: Int { lock.withLock { values.count } }

    /// The element at an index as a Foundation value (dates as ISO-8601 strings; a `Blob` as set), or nil
    /// when the index is out of range.
    public override func value(at index: Int) -> Any? { element(at: index).map(MutableValues.foundation) }

    /// The blob at an index (as set, or read from a blob dictionary), or nil.
    public override func blob(at index: Int) -> Blob? {
        if let blob = element(at: index) as? Blob { return blob }
        return super.blob(at: index)
    }

    /// The date at an index (as set, or parsed from an ISO-8601 string), or nil.
    public override func date(at index: Int) -> Date? {
        if let date = element(at: index) as? Date { return date }
        return super.date(at: index)
    }

    /// The array at an index as a live ``MutableArrayObject`` whose edits are this array's, or nil.
    public override func array(at index: Int) -> MutableArrayObject? {
        lock.withLock {
            guard values.indices.contains(index),
                let live = MutableValues.liveArray(values[index], collection: _collection)
            else { return nil }
            if live.replaced { values[index] = live.0 }
            return live.0
        }
    }

    /// The dictionary at an index as a live ``MutableDictionaryObject`` whose edits are this array's, or nil.
    public override func dictionary(at index: Int) -> MutableDictionaryObject? {
        lock.withLock {
            guard values.indices.contains(index),
                let live = MutableValues.liveDictionary(values[index], collection: _collection)
            else { return nil }
            if live.replaced { values[index] = live.0 }
            return live.0
        }
    }

    /// All elements as Foundation values.
    public override func toArray() -> [Any] { snapshot().map(MutableValues.foundation) }

    /// A deep copy.
    public override func toMutable() -> MutableArrayObject {
        MutableArrayObject(values: snapshot().map(MutableValues.copy), collection: collection)
    }

    /// The mutable fragment for an index: `tags[0].string = "home"`.
    public override subscript(index: Int) -> MutableFragment { MutableFragment(.index(index, in: self)) }

    /// Replaces an element with subscript syntax: `tags[0] = "home"` (nil stores JSON null; the index must
    /// exist). Reading `tags[0]` gives the ``MutableFragment``; read the value with `tags[0].value`.
    @_disfavoredOverload
    public subscript(index: Int) -> Any? {
        get { value(at: index) }
        set { setValue(newValue, at: index) }
    }

    // MARK: - Setting

    /// Replaces the element at an index: `String`, a number, `Bool`, `Date`, `Blob`, `NSNull` (or nil), an
    /// array or dictionary (Foundation, ``ArrayObject`` or ``DictionaryObject``).
    ///
    /// - Precondition: `index` is in `0..<count`.
    @discardableResult
    public func setValue(_ value: Any?, at index: Int) -> Self {
        lock.withLock {
            precondition(values.indices.contains(index), "Index \(index) out of range 0..<\(values.count)")
            values[index] = value ?? NSNull()
        }
        return self
    }

    /// Replaces the element at an index with a string (nil is JSON null).
    @discardableResult public func setString(_ value: String?, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a number (nil is JSON null).
    @discardableResult public func setNumber(_ value: NSNumber?, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with an integer.
    @discardableResult public func setInt(_ value: Int, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a 64-bit integer.
    @discardableResult public func setInt64(_ value: Int64, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a float.
    @discardableResult public func setFloat(_ value: Float, at index: Int) -> Self { setValue(Double(value), at: index) }
    /// Replaces the element at an index with a double.
    @discardableResult public func setDouble(_ value: Double, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a Boolean.
    @discardableResult public func setBoolean(_ value: Bool, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a date, stored as an ISO-8601 string (nil is JSON null).
    @discardableResult public func setDate(_ value: Date?, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a blob, stored when the document is saved (nil is JSON null).
    @discardableResult public func setBlob(_ value: Blob?, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with an array (a ``MutableArrayObject`` stays live; nil is JSON null).
    @discardableResult public func setArray(_ value: ArrayObject?, at index: Int) -> Self { setValue(value, at: index) }
    /// Replaces the element at an index with a dictionary (a ``MutableDictionaryObject`` stays live; nil is
    /// JSON null).
    @discardableResult public func setDictionary(_ value: DictionaryObject?, at index: Int) -> Self {
        setValue(value, at: index)
    }

    // MARK: - Appending

    /// Appends a value (nil is JSON null).
    @discardableResult
    public func addValue(_ value: Any?) -> Self {
        lock.withLock { values.append(value ?? NSNull()) }
        return self
    }

    /// Appends a string (nil is JSON null).
    @discardableResult public func addString(_ value: String?) -> Self { addValue(value) }
    /// Appends a number (nil is JSON null).
    @discardableResult public func addNumber(_ value: NSNumber?) -> Self { addValue(value) }
    /// Appends an integer.
    @discardableResult public func addInt(_ value: Int) -> Self { addValue(value) }
    /// Appends a 64-bit integer.
    @discardableResult public func addInt64(_ value: Int64) -> Self { addValue(value) }
    /// Appends a float.
    @discardableResult public func addFloat(_ value: Float) -> Self { addValue(Double(value)) }
    /// Appends a double.
    @discardableResult public func addDouble(_ value: Double) -> Self { addValue(value) }
    /// Appends a Boolean.
    @discardableResult public func addBoolean(_ value: Bool) -> Self { addValue(value) }
    /// Appends a date, stored as an ISO-8601 string (nil is JSON null).
    @discardableResult public func addDate(_ value: Date?) -> Self { addValue(value) }
    /// Appends a blob, stored when the document is saved (nil is JSON null).
    @discardableResult public func addBlob(_ value: Blob?) -> Self { addValue(value) }
    /// Appends an array (a ``MutableArrayObject`` stays live; nil is JSON null).
    @discardableResult public func addArray(_ value: ArrayObject?) -> Self { addValue(value) }
    /// Appends a dictionary (a ``MutableDictionaryObject`` stays live; nil is JSON null).
    @discardableResult public func addDictionary(_ value: DictionaryObject?) -> Self { addValue(value) }

    // MARK: - Inserting

    /// Inserts a value at an index; `count` appends (nil is JSON null).
    ///
    /// - Precondition: `index` is in `0...count`.
    @discardableResult
    public func insertValue(_ value: Any?, at index: Int) -> Self {
        lock.withLock {
            precondition((0...values.count).contains(index), "Index \(index) out of range 0...\(values.count)")
            values.insert(value ?? NSNull(), at: index)
        }
        return self
    }

    /// Inserts a string at an index (nil is JSON null).
    @discardableResult public func insertString(_ value: String?, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a number at an index (nil is JSON null).
    @discardableResult public func insertNumber(_ value: NSNumber?, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts an integer at an index.
    @discardableResult public func insertInt(_ value: Int, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a 64-bit integer at an index.
    @discardableResult public func insertInt64(_ value: Int64, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a float at an index.
    @discardableResult public func insertFloat(_ value: Float, at index: Int) -> Self { insertValue(Double(value), at: index) }
    /// Inserts a double at an index.
    @discardableResult public func insertDouble(_ value: Double, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a Boolean at an index.
    @discardableResult public func insertBoolean(_ value: Bool, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a date, stored as an ISO-8601 string, at an index (nil is JSON null).
    @discardableResult public func insertDate(_ value: Date?, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a blob, stored when the document is saved, at an index (nil is JSON null).
    @discardableResult public func insertBlob(_ value: Blob?, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts an array at an index (a ``MutableArrayObject`` stays live; nil is JSON null).
    @discardableResult public func insertArray(_ value: ArrayObject?, at index: Int) -> Self { insertValue(value, at: index) }
    /// Inserts a dictionary at an index (a ``MutableDictionaryObject`` stays live; nil is JSON null).
    @discardableResult public func insertDictionary(_ value: DictionaryObject?, at index: Int) -> Self {
        insertValue(value, at: index)
    }

    // MARK: - Removing and replacing

    /// Removes the element at an index.
    ///
    /// - Precondition: `index` is in `0..<count`.
    @discardableResult
    public func removeValue(at index: Int) -> Self {
        lock.withLock {
            precondition(values.indices.contains(index), "Index \(index) out of range 0..<\(values.count)")
            values.remove(at: index)
        }
        return self
    }

    /// Replaces every element (nil empties the array).
    @discardableResult
    public func setData(_ data: [Any]?) -> Self {
        lock.withLock { values = data ?? [] }
        return self
    }

    /// Replaces every element with those parsed from a JSON array.
    ///
    /// - Throws: `.badInput` when the text is not a JSON array.
    @discardableResult
    public func setJSON(_ json: String) throws -> Self {
        let elements = try DocumentValues.parseArray(json)
        lock.withLock { values = elements }
        return self
    }
}
