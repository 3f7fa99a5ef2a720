import CSQLite
import Foundation

// MARK: - Column metadata

extension Statement {
    /// The name of a result column: its `AS` alias, or SQLite's name for it.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The name, or `""` for an invalid index.
    public func columnName(at index: Int) -> String {
        guard let name = sqlite3_column_name(handle, Int32(truncatingIfNeeded: index)) else { return "" }
        return String(cString: name)
    }

    /// The names of all result columns, in order.
    public var columnNames: [String] {
        (0..<columnCount).map { columnName(at: $0) }
    }
}

// MARK: - Column values

// Column getters read the current row after `step()` returned `true`. Indexes are 0-based.
// Typed getters apply SQLite's conversions (`NULL` reads as 0, 0.0, "" or []), so use
// `isNull(at:)` or `value(at:)` when `NULL` matters.
extension Statement {
    /// Whether a column of the current row is `NULL`.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: `true` for `NULL`.
    @inline(__always)
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(truncatingIfNeeded: index)) == SQLITE_NULL
    }

    /// A column of the current row as a 64-bit integer.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The integer (`NULL` reads as 0).
    @inline(__always)
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(truncatingIfNeeded: index))
    }

    /// A column of the current row as an `Int`.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The integer (`NULL` reads as 0).
    @inline(__always)
    public func int(at index: Int) -> Int {
        Int(int64(at: index))
    }

    /// A column of the current row as a Boolean: any non-zero integer is `true`.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The Boolean (`NULL` reads as `false`).
    @inline(__always)
    public func bool(at index: Int) -> Bool {
        int64(at: index) != 0
    }

    /// A column of the current row as a floating point number.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The number (`NULL` reads as 0.0).
    @inline(__always)
    public func double(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(truncatingIfNeeded: index))
    }

    /// A column of the current row as text, read with its byte count, so embedded NUL
    /// characters are kept; invalid UTF-8 is repaired with replacement characters.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The text (`NULL` reads as `""`).
    public func string(at index: Int) -> String {
        let column = Int32(truncatingIfNeeded: index)
        // sqlite3_column_text first, then sqlite3_column_bytes: the order SQLite documents.
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// A column of the current row as bytes.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The bytes (`NULL` and the empty blob read as `[]`).
    public func blob(at index: Int) -> [UInt8] {
        withBytes(at: index) { [UInt8]($0) }
    }

    /// Calls `body` with the bytes of a column of the current row (its text or blob), without copying them.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    ///   - body: Reads the bytes; they are valid only during the call (`NULL` reads as no bytes).
    /// - Returns: What `body` returns.
    public func withBytes<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let column = Int32(truncatingIfNeeded: index)
        // sqlite3_column_blob first, then sqlite3_column_bytes: the order SQLite documents.
        guard let bytes = sqlite3_column_blob(handle, column) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// Whether a column of the current row holds an integer, a floating point number, text, a blob or `NULL`.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The column's storage class.
    @inline(__always)
    public func storageClass(at index: Int) -> StorageClass {
        switch sqlite3_column_type(handle, Int32(truncatingIfNeeded: index)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// SQLite's storage classes.
    public enum StorageClass: Sendable {
        case null, integer, real, text, blob
    }

    /// A column of the current row as `Data`.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The bytes (`NULL` and the empty blob read as empty data).
    public func data(at index: Int) -> Data {
        let column = Int32(truncatingIfNeeded: index)
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// A column of the current row in its own storage class.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index.
    /// - Returns: The value.
    public func value(at index: Int) -> SQLiteValue {
        switch storageClass(at: index) {
        case .integer: .integer(int64(at: index))
        case .real: .real(double(at: index))
        case .text: .text(string(at: index))
        case .blob: .blob(blob(at: index))
        case .null: .null
        }
    }
}
