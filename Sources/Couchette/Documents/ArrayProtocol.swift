import Foundation

/// Read access by index, as ``ArrayObject`` has it (Couchbase Lite 3).
///
/// A getter for an index out of range, or a value of another type, returns nil (or 0 / false for scalars).
public protocol ArrayProtocol: ArrayFragment {
    /// The number of elements.
    var count: Int { get }
    /// The element at an index as a Foundation value (`String`, a number, `Bool`, `[Any]`, `[String: Any]`,
    /// `NSNull`), a `Blob` set but not saved yet, or nil when the index is out of range.
    func value(at index: Int) -> Any?
    /// The string at an index, or nil.
    func string(at index: Int) -> String?
    /// The number at an index as an `Int` (truncated), or 0.
    func int(at index: Int) -> Int
    /// The number at an index as an `Int64`, or 0.
    func int64(at index: Int) -> Int64
    /// The number at an index as a `Float`, or 0.
    func float(at index: Int) -> Float
    /// The number at an index as a `Double`, or 0.
    func double(at index: Int) -> Double
    /// The number at an index, or nil.
    func number(at index: Int) -> NSNumber?
    /// The Boolean at an index (true for a non-zero number), or false.
    func boolean(at index: Int) -> Bool
    /// The blob at an index, or nil.
    func blob(at index: Int) -> Blob?
    /// The date (an ISO-8601 string) at an index, or nil.
    func date(at index: Int) -> Date?
    /// The array at an index, or nil.
    func array(at index: Int) -> ArrayObject?
    /// The dictionary at an index, or nil.
    func dictionary(at index: Int) -> DictionaryObject?
    /// All elements as Foundation values.
    func toArray() -> [Any]
    /// The elements as JSON text.
    func toJSON() -> String
}

/// Write access by index, as ``MutableArrayObject`` has it (Couchbase Lite 3).
///
/// Each method returns `self`, so calls chain. An index out of range is a programming error and traps, as
/// with Swift arrays; a nil value is stored as JSON null.
public protocol MutableArrayProtocol: ArrayProtocol, MutableArrayFragment {
    /// Replaces the element at an index.
    @discardableResult func setValue(_ value: Any?, at index: Int) -> Self
    /// Replaces the element at an index with a string.
    @discardableResult func setString(_ value: String?, at index: Int) -> Self
    /// Replaces the element at an index with a number.
    @discardableResult func setNumber(_ value: NSNumber?, at index: Int) -> Self
    /// Replaces the element at an index with an integer.
    @discardableResult func setInt(_ value: Int, at index: Int) -> Self
    /// Replaces the element at an index with a 64-bit integer.
    @discardableResult func setInt64(_ value: Int64, at index: Int) -> Self
    /// Replaces the element at an index with a float.
    @discardableResult func setFloat(_ value: Float, at index: Int) -> Self
    /// Replaces the element at an index with a double.
    @discardableResult func setDouble(_ value: Double, at index: Int) -> Self
    /// Replaces the element at an index with a Boolean.
    @discardableResult func setBoolean(_ value: Bool, at index: Int) -> Self
    /// Replaces the element at an index with a date (stored as an ISO-8601 string).
    @discardableResult func setDate(_ value: Date?, at index: Int) -> Self
    /// Replaces the element at an index with a blob.
    @discardableResult func setBlob(_ value: Blob?, at index: Int) -> Self
    /// Replaces the element at an index with an array.
    @discardableResult func setArray(_ value: ArrayObject?, at index: Int) -> Self
    /// Replaces the element at an index with a dictionary.
    @discardableResult func setDictionary(_ value: DictionaryObject?, at index: Int) -> Self
    /// Appends a value.
    @discardableResult func addValue(_ value: Any?) -> Self
    /// Appends a string.
    @discardableResult func addString(_ value: String?) -> Self
    /// Appends a number.
    @discardableResult func addNumber(_ value: NSNumber?) -> Self
    /// Appends an integer.
    @discardableResult func addInt(_ value: Int) -> Self
    /// Appends a 64-bit integer.
    @discardableResult func addInt64(_ value: Int64) -> Self
    /// Appends a float.
    @discardableResult func addFloat(_ value: Float) -> Self
    /// Appends a double.
    @discardableResult func addDouble(_ value: Double) -> Self
    /// Appends a Boolean.
    @discardableResult func addBoolean(_ value: Bool) -> Self
    /// Appends a date (stored as an ISO-8601 string).
    @discardableResult func addDate(_ value: Date?) -> Self
    /// Appends a blob.
    @discardableResult func addBlob(_ value: Blob?) -> Self
    /// Appends an array.
    @discardableResult func addArray(_ value: ArrayObject?) -> Self
    /// Appends a dictionary.
    @discardableResult func addDictionary(_ value: DictionaryObject?) -> Self
    /// Inserts a value at an index (`count` appends).
    @discardableResult func insertValue(_ value: Any?, at index: Int) -> Self
    /// Inserts a string at an index.
    @discardableResult func insertString(_ value: String?, at index: Int) -> Self
    /// Inserts a number at an index.
    @discardableResult func insertNumber(_ value: NSNumber?, at index: Int) -> Self
    /// Inserts an integer at an index.
    @discardableResult func insertInt(_ value: Int, at index: Int) -> Self
    /// Inserts a 64-bit integer at an index.
    @discardableResult func insertInt64(_ value: Int64, at index: Int) -> Self
    /// Inserts a float at an index.
    @discardableResult func insertFloat(_ value: Float, at index: Int) -> Self
    /// Inserts a double at an index.
    @discardableResult func insertDouble(_ value: Double, at index: Int) -> Self
    /// Inserts a Boolean at an index.
    @discardableResult func insertBoolean(_ value: Bool, at index: Int) -> Self
    /// Inserts a date (stored as an ISO-8601 string) at an index.
    @discardableResult func insertDate(_ value: Date?, at index: Int) -> Self
    /// Inserts a blob at an index.
    @discardableResult func insertBlob(_ value: Blob?, at index: Int) -> Self
    /// Inserts an array at an index.
    @discardableResult func insertArray(_ value: ArrayObject?, at index: Int) -> Self
    /// Inserts a dictionary at an index.
    @discardableResult func insertDictionary(_ value: DictionaryObject?, at index: Int) -> Self
    /// Replaces every element.
    @discardableResult func setData(_ data: [Any]?) -> Self
    /// Replaces every element with those parsed from a JSON array.
    @discardableResult func setJSON(_ json: String) throws -> Self
    /// Removes the element at an index.
    @discardableResult func removeValue(at index: Int) -> Self
    /// The array at an index as a live mutable array whose edits are this array's, or nil.
    func array(at index: Int) -> MutableArrayObject?
    /// The dictionary at an index as a live mutable dictionary whose edits are this array's, or nil.
    func dictionary(at index: Int) -> MutableDictionaryObject?
}

/// Subscript access by index to ``Fragment``s.
public protocol ArrayFragment {
    /// The fragment for an index: `doc["tags"][1].string`.
    subscript(index: Int) -> Fragment { get }
}

/// Subscript access by index to ``MutableFragment``s.
public protocol MutableArrayFragment {
    /// The mutable fragment for an index: `doc["tags"][1].string = "urgent"`.
    subscript(index: Int) -> MutableFragment { get }
}
