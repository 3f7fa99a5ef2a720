import Foundation

/// Read and write access to one value at a path (Couchbase Lite 3 `MutableFragmentProtocol`).
public protocol MutableFragmentProtocol: FragmentProtocol {
    /// The value; setting nil removes a dictionary key, or stores JSON null in an array.
    var value: Any? { get set }
    /// The value as a string.
    var string: String? { get set }
    /// The value as a number.
    var number: NSNumber? { get set }
    /// The value as an `Int`.
    var int: Int { get set }
    /// The value as an `Int64`.
    var int64: Int64 { get set }
    /// The value as a `Float`.
    var float: Float { get set }
    /// The value as a `Double`.
    var double: Double { get set }
    /// The value as a Boolean.
    var boolean: Bool { get set }
    /// The value as a date.
    var date: Date? { get set }
    /// The value as a blob.
    var blob: Blob? { get set }
    /// The value as a live mutable array.
    var array: MutableArrayObject? { get set }
    /// The value as a live mutable dictionary.
    var dictionary: MutableDictionaryObject? { get set }
}

/// One value at a path in a mutable document, read and written through subscripts that chain (Couchbase
/// Lite 3 `MutableFragment`).
///
/// Setting a property writes through to the parent container, so the document sees it. Setting a value
/// where the parent is missing (`doc["nothing"]["name"].string = "x"`) does nothing, as does setting an index
/// out of range.
///
/// ```swift
/// let edit = try lists.document(id: "l1")!.toMutable()
/// edit["owner"]["name"].string = "Alice"
/// edit["tags"][0].value = "home"
/// try lists.save(document: edit)
/// ```
public final class MutableFragment: Fragment, MutableFragmentProtocol, MutableDictionaryFragment,
    MutableArrayFragment, @unchecked Sendable
{
    /// Writes a value into the parent, if there is one (and, in an array, the index exists).
    private func write(_ value: Any?) {
        switch location {
        case .missing: break
        case .key(let key, let parent): (parent as? any MutableDictionaryProtocol)?.setValue(value, forKey: key)
        case .index(let index, let parent): (parent as? MutableArrayObject)?.setValueIfPresent(value, at: index)
        }
    }

    /// The value as a Foundation value, or nil when missing; setting nil removes a dictionary key, or stores
    /// JSON null in an array.
    public override var value: Any? {
        get { super.value }
        set { write(newValue) }
    }

    /// The value as a string; setting nil removes a dictionary key, or stores JSON null in an array.
    public override var string: String? {
        get { super.string }
        set { write(newValue) }
    }

    /// The value as a number; setting nil removes a dictionary key, or stores JSON null in an array.
    public override var number: NSNumber? {
        get { super.number }
        set { write(newValue) }
    }

    /// The value as an `Int`, or 0.
    public override var int: Int {
        get { super.int }
        set { write(newValue) }
    }

    /// The value as an `Int64`, or 0.
    public override var int64: Int64 {
        get { super.int64 }
        set { write(newValue) }
    }

    /// The value as a `Float`, or 0.
    public override var float: Float {
        get { super.float }
        set { write(Double(newValue)) }
    }

    /// The value as a `Double`, or 0.
    public override var double: Double {
        get { super.double }
        set { write(newValue) }
    }

    /// The value as a Boolean, or false.
    public override var boolean: Bool {
        get { super.boolean }
        set { write(newValue) }
    }

    /// The value as a date; set, it is stored as an ISO-8601 string.
    public override var date: Date? {
        get { super.date }
        set { write(newValue) }
    }

    /// The value as a blob; set, it is stored when the document is saved.
    public override var blob: Blob? {
        get { super.blob }
        set { write(newValue) }
    }

    /// The value as a live mutable array whose edits are the document's, or nil.
    public override var array: MutableArrayObject? {
        get { super.array as? MutableArrayObject }
        set { write(newValue) }
    }

    /// The value as a live mutable dictionary whose edits are the document's, or nil.
    public override var dictionary: MutableDictionaryObject? {
        get { super.dictionary as? MutableDictionaryObject }
        set { write(newValue) }
    }

    /// The mutable fragment for a key of this value (missing unless this value is a dictionary).
    public override subscript(key: String) -> MutableFragment {
        MutableFragment(dictionary.map { .key(key, in: $0) } ?? .missing)
    }

    /// The mutable fragment for an index of this value (missing unless this value is an array).
    public override subscript(index: Int) -> MutableFragment {
        MutableFragment(array.map { .index(index, in: $0) } ?? .missing)
    }
}
