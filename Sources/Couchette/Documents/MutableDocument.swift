import CouchetteCore
import Foundation

/// An editable document; each setter returns `self`, so calls chain.
///
/// ```swift
/// let list = MutableDocument(id: "user1.\(UUID())")
///     .setString("task-list", forKey: "type")
///     .setString("Groceries", forKey: "name")
/// try lists.save(document: list)
/// ```
public final class MutableDocument: Document, @unchecked Sendable {
    /// Values as the user set them (Blobs and Dates kept until save).
    private var values: [String: Any]

    /// A new document with a generated ID.
    public convenience init() { self.init(id: nil, data: nil) }

    /// A new document with this ID (generated when nil).
    public convenience init(id: String?) { self.init(id: id, data: nil) }

    /// A new document with a generated ID and these properties.
    public convenience init(data: [String: Any]?) { self.init(id: nil, data: data) }

    /// A new document with this ID (generated when nil) and these properties.
    public init(id: String?, data: [String: Any]?) {
        values = data ?? [:]
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
        values = members
        super.init(id: id, revisionID: revisionID, sequence: sequence, collection: collection, body: members)
    }

    /// A random 32-character lowercase hex ID, as Sync Gateway generates.
    static func generateID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
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

    /// The values as set, for saving.
    func editedValues() -> [String: Any] { lock.withLock { values } }

    public override func value(forKey key: String) -> Any? {
        let value = lock.withLock { values[key] }
        switch value {
        case let json as JSONValue: return DocumentValues.value(from: json)
        case let date as Date: return DocumentValues.string(from: date)
        default: return value
        }
    }

    public override func blob(forKey key: String) -> Blob? {
        switch lock.withLock({ values[key] }) {
        case let blob as Blob: return blob
        default: return super.blob(forKey: key)
        }
    }

    public override func date(forKey key: String) -> Date? {
        if let date = lock.withLock({ values[key] }) as? Date { return date }
        return super.date(forKey: key)
    }

    // MARK: - Editing

    /// Sets a value: `String`, a number, `Bool`, `Date`, `Blob`, `[Any]`, `[String: Any]`, `NSNull`, or nil
    /// to remove the key. A value that is not JSON makes the next save throw `.badInput`.
    @discardableResult
    public func setValue(_ value: Any?, forKey key: String) -> Self {
        lock.withLock {
            if let value { values[key] = value } else { values[key] = nil }
        }
        return self
    }

    /// Sets a string, or removes the key when nil.
    @discardableResult public func setString(_ value: String?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets an integer.
    @discardableResult public func setInt(_ value: Int, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a 64-bit integer.
    @discardableResult public func setInt64(_ value: Int64, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a double.
    @discardableResult public func setDouble(_ value: Double, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a float.
    @discardableResult public func setFloat(_ value: Float, forKey key: String) -> Self { setValue(Double(value), forKey: key) }
    /// Sets a number, or removes the key when nil.
    @discardableResult public func setNumber(_ value: NSNumber?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a Boolean.
    @discardableResult public func setBoolean(_ value: Bool, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a date, stored as an ISO-8601 string; removes the key when nil.
    @discardableResult public func setDate(_ value: Date?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a blob, stored when the document is saved; removes the key when nil.
    @discardableResult public func setBlob(_ value: Blob?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets an array, or removes the key when nil.
    @discardableResult public func setArray(_ value: [Any]?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a dictionary, or removes the key when nil.
    @discardableResult public func setDictionary(_ value: [String: Any]?, forKey key: String) -> Self {
        setValue(value, forKey: key)
    }
    /// Sets an explicit JSON null (different from a missing key).
    @discardableResult public func setNull(forKey key: String) -> Self { setValue(NSNull(), forKey: key) }

    /// Removes a key.
    @discardableResult
    public func removeValue(forKey key: String) -> Self { setValue(nil, forKey: key) }

    /// Replaces every property.
    @discardableResult
    public func setData(_ data: [String: Any]) -> Self {
        lock.withLock { values = data }
        return self
    }

    /// Replaces every property with those parsed from JSON text.
    ///
    /// - Throws: `.badInput` when the text is not a JSON object.
    @discardableResult
    public func setJSON(_ json: String) throws -> Self {
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: json) } catch { throw CouchetteError.wrap(error) }
        guard case .object(let members) = parsed else {
            throw CouchetteError(.badInput, message: "Document JSON must be an object, not \(parsed.typeDescription)")
        }
        lock.withLock { values = members }
        return self
    }

    /// Sets a value with subscript syntax: `doc["name"] = "Groceries"`.
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    // MARK: - After a save

    func didSave(revisionID: String, sequence: UInt64, collection: Collection, members: [String: JSONValue]) {
        lock.withLock {
            _revisionID = revisionID
            _sequence = sequence
            _collection = collection
            values = members
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
