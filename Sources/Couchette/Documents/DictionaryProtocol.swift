import Foundation

/// Read access by key, as ``Document`` and ``DictionaryObject`` have it (Couchbase Lite 3).
///
/// A getter for a missing key, or a value of another type, returns nil (or 0 / false for scalars).
public protocol DictionaryProtocol: DictionaryFragment {
    /// The number of entries.
    var count: Int { get }
    /// The keys, sorted.
    var keys: [String] { get }
    /// The value for a key as a Foundation value (`String`, a number, `Bool`, `[Any]`, `[String: Any]`,
    /// `NSNull`), a `Blob` set but not saved yet, or nil when the key is missing.
    func value(forKey key: String) -> Any?
    /// The string for a key, or nil.
    func string(forKey key: String) -> String?
    /// The number for a key, or nil.
    func number(forKey key: String) -> NSNumber?
    /// The number for a key as an `Int` (truncated), or 0.
    func int(forKey key: String) -> Int
    /// The number for a key as an `Int64`, or 0.
    func int64(forKey key: String) -> Int64
    /// The number for a key as a `Float`, or 0.
    func float(forKey key: String) -> Float
    /// The number for a key as a `Double`, or 0.
    func double(forKey key: String) -> Double
    /// The Boolean for a key (true for a non-zero number), or false.
    func boolean(forKey key: String) -> Bool
    /// The blob for a key, or nil.
    func blob(forKey key: String) -> Blob?
    /// The date (an ISO-8601 string) for a key, or nil.
    func date(forKey key: String) -> Date?
    /// The array for a key, or nil.
    func array(forKey key: String) -> ArrayObject?
    /// The dictionary for a key, or nil.
    func dictionary(forKey key: String) -> DictionaryObject?
    /// Whether the key is present (even with a null value).
    func contains(key: String) -> Bool
    /// All entries as Foundation values.
    func toDictionary() -> [String: Any]
    /// The entries as JSON text, keys sorted.
    func toJSON() -> String
}

/// Write access by key, as ``MutableDocument`` and ``MutableDictionaryObject`` have it (Couchbase Lite 3).
///
/// Each setter returns `self`, so calls chain.
public protocol MutableDictionaryProtocol: DictionaryProtocol, MutableDictionaryFragment {
    /// Sets a value (see ``MutableDocument/setValue(_:forKey:)``); nil removes the key.
    @discardableResult func setValue(_ value: Any?, forKey key: String) -> Self
    /// Sets a string; nil removes the key.
    @discardableResult func setString(_ value: String?, forKey key: String) -> Self
    /// Sets a number; nil removes the key.
    @discardableResult func setNumber(_ value: NSNumber?, forKey key: String) -> Self
    /// Sets an integer.
    @discardableResult func setInt(_ value: Int, forKey key: String) -> Self
    /// Sets a 64-bit integer.
    @discardableResult func setInt64(_ value: Int64, forKey key: String) -> Self
    /// Sets a float.
    @discardableResult func setFloat(_ value: Float, forKey key: String) -> Self
    /// Sets a double.
    @discardableResult func setDouble(_ value: Double, forKey key: String) -> Self
    /// Sets a Boolean.
    @discardableResult func setBoolean(_ value: Bool, forKey key: String) -> Self
    /// Sets a date, stored as an ISO-8601 string; nil removes the key.
    @discardableResult func setDate(_ value: Date?, forKey key: String) -> Self
    /// Sets a blob; nil removes the key.
    @discardableResult func setBlob(_ value: Blob?, forKey key: String) -> Self
    /// Sets an array; nil removes the key.
    @discardableResult func setArray(_ value: ArrayObject?, forKey key: String) -> Self
    /// Sets a dictionary; nil removes the key.
    @discardableResult func setDictionary(_ value: DictionaryObject?, forKey key: String) -> Self
    /// Replaces every entry.
    @discardableResult func setData(_ data: [String: Any]?) -> Self
    /// Replaces every entry with those parsed from a JSON object.
    @discardableResult func setJSON(_ json: String) throws -> Self
    /// Removes a key.
    @discardableResult func removeValue(forKey key: String) -> Self
    /// The array for a key as a live mutable array whose edits are this container's, or nil.
    func array(forKey key: String) -> MutableArrayObject?
    /// The dictionary for a key as a live mutable dictionary whose edits are this container's, or nil.
    func dictionary(forKey key: String) -> MutableDictionaryObject?
}

/// Subscript access by key to ``Fragment``s.
public protocol DictionaryFragment {
    /// The fragment for a key: `doc["owner"]["name"].string`.
    subscript(key: String) -> Fragment { get }
}

/// Subscript access by key to ``MutableFragment``s.
public protocol MutableDictionaryFragment {
    /// The mutable fragment for a key: `doc["owner"]["name"].string = "Alice"`.
    subscript(key: String) -> MutableFragment { get }
}

// MARK: - Typed setters

/// Every typed setter is ``MutableDictionaryProtocol/setValue(_:forKey:)`` with a narrower type.
extension MutableDictionaryProtocol {
    /// Sets a string, or removes the key when nil.
    @discardableResult public func setString(_ value: String?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a number, or removes the key when nil.
    @discardableResult public func setNumber(_ value: NSNumber?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets an integer.
    @discardableResult public func setInt(_ value: Int, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a 64-bit integer.
    @discardableResult public func setInt64(_ value: Int64, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a float (stored as a double).
    @discardableResult public func setFloat(_ value: Float, forKey key: String) -> Self { setValue(Double(value), forKey: key) }
    /// Sets a double.
    @discardableResult public func setDouble(_ value: Double, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a Boolean.
    @discardableResult public func setBoolean(_ value: Bool, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a date, stored as an ISO-8601 string; removes the key when nil.
    @discardableResult public func setDate(_ value: Date?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a blob, stored when the document is saved; removes the key when nil.
    @discardableResult public func setBlob(_ value: Blob?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets an array (a ``MutableArrayObject`` stays live: later edits to it are saved too); nil removes the key.
    @discardableResult public func setArray(_ value: ArrayObject?, forKey key: String) -> Self { setValue(value, forKey: key) }
    /// Sets a dictionary (a ``MutableDictionaryObject`` stays live); nil removes the key.
    @discardableResult public func setDictionary(_ value: DictionaryObject?, forKey key: String) -> Self {
        setValue(value, forKey: key)
    }
    /// Sets an explicit JSON null (different from a missing key).
    @discardableResult public func setNull(forKey key: String) -> Self { setValue(NSNull(), forKey: key) }
    /// Removes a key.
    @discardableResult public func removeValue(forKey key: String) -> Self { setValue(nil, forKey: key) }
}
