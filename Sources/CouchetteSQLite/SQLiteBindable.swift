import Foundation

/// A Swift value that can be bound to a statement parameter.
///
/// `Int`, `Int64`, `Int32`, `Double`, `Bool`, `String`, `[UInt8]`, `Data` and ``SQLiteValue``
/// conform. Arguments are written as `(any SQLiteBindable)?` so that `nil` binds `NULL`:
///
/// ```swift
/// try connection.execute("INSERT INTO docs (id, seq, body) VALUES (?, ?, ?)", "doc1", 1, nil)
/// ```
public protocol SQLiteBindable {
    /// The value to store.
    var sqliteValue: SQLiteValue { get }
}

// MARK: - Conformances

extension SQLiteValue: SQLiteBindable {
    /// The value itself.
    public var sqliteValue: SQLiteValue { self }
}

extension Int: SQLiteBindable {
    /// An `.integer`.
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Int64: SQLiteBindable {
    /// An `.integer`.
    public var sqliteValue: SQLiteValue { .integer(self) }
}

extension Int32: SQLiteBindable {
    /// An `.integer`.
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Double: SQLiteBindable {
    /// A `.real`.
    public var sqliteValue: SQLiteValue { .real(self) }
}

extension Bool: SQLiteBindable {
    /// An `.integer`: 1 for `true`, 0 for `false`.
    public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
}

extension String: SQLiteBindable {
    /// A `.text`.
    public var sqliteValue: SQLiteValue { .text(self) }
}

extension Substring: SQLiteBindable {
    /// A `.text`.
    public var sqliteValue: SQLiteValue { .text(String(self)) }
}

extension Array: SQLiteBindable where Element == UInt8 {
    /// A `.blob`.
    public var sqliteValue: SQLiteValue { .blob(self) }
}

extension Data: SQLiteBindable {
    /// A `.blob` (a copy of the bytes; `Statement.bind(_:at:)` with `Data` binds without one).
    public var sqliteValue: SQLiteValue { .blob([UInt8](self)) }
}
