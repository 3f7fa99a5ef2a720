import Foundation

/// Read access to one value at a path (Couchbase Lite 3 `FragmentProtocol`).
public protocol FragmentProtocol {
    /// The value as a Foundation value, or nil when the path does not exist.
    var value: Any? { get }
    /// The value as a string, or nil.
    var string: String? { get }
    /// The value as an `Int`, or 0.
    var int: Int { get }
    /// The value as an `Int64`, or 0.
    var int64: Int64 { get }
    /// The value as a `Float`, or 0.
    var float: Float { get }
    /// The value as a `Double`, or 0.
    var double: Double { get }
    /// The value as a number, or nil.
    var number: NSNumber? { get }
    /// The value as a Boolean, or false.
    var boolean: Bool { get }
    /// The value as a date, or nil.
    var date: Date? { get }
    /// The value as a blob, or nil.
    var blob: Blob? { get }
    /// The value as an array, or nil.
    var array: ArrayObject? { get }
    /// The value as a dictionary, or nil.
    var dictionary: DictionaryObject? { get }
    /// Whether there is a value (JSON null counts) at the path.
    var exists: Bool { get }
}

/// One value at a path in a document, read through subscripts that chain (Couchbase Lite 3 `Fragment`).
///
/// A fragment is a cursor, not a copy: it reads its parent when asked. A path that does not exist gives
/// `exists == false`, nil for optional values and 0 or false for the others; subscripting it again gives
/// another missing fragment, so chains never trap.
///
/// ```swift
/// let owner = list["owner"]["name"].string        // nil when there is no owner or no name
/// let second = list["tags"][1].string
/// ```
public class Fragment: FragmentProtocol, DictionaryFragment, ArrayFragment, @unchecked Sendable {
    /// Where the value is.
    enum Location: Sendable {
        /// Nowhere: a parent along the path is missing or of another type.
        case missing
        /// A key of a document or dictionary.
        case key(String, in: any DictionaryProtocol & Sendable)
        /// An index of an array.
        case index(Int, in: any ArrayProtocol & Sendable)
    }

    let location: Location

    init(_ location: Location) {
        self.location = location
    }

    /// Reads through the parent, or returns `missing` when there is none.
    func read<T>(
        _ missing: T, key: (any DictionaryProtocol, String) -> T, index: (any ArrayProtocol, Int) -> T
    ) -> T {
        switch location {
        case .missing: missing
        case .key(let name, let parent): key(parent, name)
        case .index(let position, let parent): index(parent, position)
        }
    }

    /// The value as a Foundation value (`String`, a number, `Bool`, `[Any]`, `[String: Any]`, `NSNull`), or
    /// nil when the path does not exist.
    public var value: Any? { read(nil, key: { $0.value(forKey: $1) }, index: { $0.value(at: $1) }) }

    /// The value as a string, or nil when missing or not a string.
    public var string: String? { read(nil, key: { $0.string(forKey: $1) }, index: { $0.string(at: $1) }) }

    /// The value as an `Int` (truncated; a Boolean is 1 or 0), or 0.
    public var int: Int { read(0, key: { $0.int(forKey: $1) }, index: { $0.int(at: $1) }) }

    /// The value as an `Int64`, or 0.
    public var int64: Int64 { read(0, key: { $0.int64(forKey: $1) }, index: { $0.int64(at: $1) }) }

    /// The value as a `Float`, or 0.
    public var float: Float { read(0, key: { $0.float(forKey: $1) }, index: { $0.float(at: $1) }) }

    /// The value as a `Double`, or 0.
    public var double: Double { read(0, key: { $0.double(forKey: $1) }, index: { $0.double(at: $1) }) }

    /// The value as a number, or nil when missing or not a number.
    public var number: NSNumber? { read(nil, key: { $0.number(forKey: $1) }, index: { $0.number(at: $1) }) }

    /// The value as a Boolean (true for a non-zero number), or false.
    public var boolean: Bool { read(false, key: { $0.boolean(forKey: $1) }, index: { $0.boolean(at: $1) }) }

    /// The value as a date (an ISO-8601 string), or nil.
    public var date: Date? { read(nil, key: { $0.date(forKey: $1) }, index: { $0.date(at: $1) }) }

    /// The value as a blob, or nil.
    public var blob: Blob? { read(nil, key: { $0.blob(forKey: $1) }, index: { $0.blob(at: $1) }) }

    /// The value as an array, or nil when missing or not an array.
    public var array: ArrayObject? { read(nil, key: { $0.array(forKey: $1) }, index: { $0.array(at: $1) }) }

    /// The value as a dictionary, or nil when missing or not a dictionary.
    public var dictionary: DictionaryObject? {
        read(nil, key: { $0.dictionary(forKey: $1) }, index: { $0.dictionary(at: $1) })
    }

    /// Whether there is a value at the path (a JSON null counts).
    public var exists: Bool {
        read(false, key: { $0.contains(key: $1) }, index: { $1 >= 0 && $1 < $0.count })
    }

    /// The fragment for a key of this value (missing unless this value is a dictionary).
    public subscript(key: String) -> Fragment {
        Fragment(dictionary.map { .key(key, in: $0) } ?? .missing)
    }

    /// The fragment for an index of this value (missing unless this value is an array).
    public subscript(index: Int) -> Fragment {
        Fragment(array.map { .index(index, in: $0) } ?? .missing)
    }
}
