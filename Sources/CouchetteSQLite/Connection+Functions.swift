import CSQLite
import Foundation

// MARK: - Functions and collations written in Swift

extension Connection {
    /// A scalar SQL function: the arguments' values in, a value out; a thrown error becomes the statement's error.
    public typealias ScalarFunction = @Sendable ([SQLiteValue]) throws -> SQLiteValue

    /// Adds (or replaces) a scalar SQL function named `name` taking `argumentCount` arguments (-1: any number).
    ///
    /// ```swift
    /// try connection.createFunction("twice", argumentCount: 1) { arguments in
    ///     .integer((arguments[0].int64Value ?? 0) * 2)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - deterministic: Whether the same arguments always give the same result, so SQLite may use the function in
    ///     indexes and factor calls out.
    /// - Throws: ``SQLiteError`` when SQLite refuses the definition, or the connection is closed.
    public func createFunction(
        _ name: String, argumentCount: Int, deterministic: Bool = true, _ body: @escaping ScalarFunction
    ) throws {
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        let flags = SQLITE_UTF8 | (deterministic ? SQLITE_DETERMINISTIC : 0)
        try database.withOpenHandle { handle in
            try SQLiteError.check(
                sqlite3_create_function_v2(
                    handle, name, Int32(argumentCount), flags, box,
                    { context, count, values in
                        let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                        let arguments = (0..<Int(count)).map { SQLiteValue(values![$0]) }
                        do {
                            try box.body(arguments).setResult(of: context)
                        } catch {
                            sqlite3_result_error(context, "\(error)", -1)
                        }
                    }, nil, nil,
                    { box in box.map { Unmanaged<FunctionBox>.fromOpaque($0).release() } }),
                database: handle)
        }
    }

    /// Adds (or replaces) a collation named `name`, usable as `COLLATE name`, ordering texts by `compare`.
    ///
    /// - Throws: ``SQLiteError`` when SQLite refuses it, or the connection is closed.
    public func createCollation(
        _ name: String, _ compare: @escaping @Sendable (String, String) -> ComparisonResult
    ) throws {
        let box = Unmanaged.passRetained(CollationBox(compare)).toOpaque()
        try database.withOpenHandle { handle in
            // Unlike create_function_v2, a failing create_collation_v2 does not call the destructor.
            let code = sqlite3_create_collation_v2(
                    handle, name, SQLITE_UTF8, box,
                    { box, leftCount, left, rightCount, right in
                        let compare = Unmanaged<CollationBox>.fromOpaque(box!).takeUnretainedValue().compare
                        let text = { (bytes: UnsafeRawPointer?, count: Int32) in
                            String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
                        }
                        return Int32(compare(text(left, leftCount), text(right, rightCount)).rawValue)
                    },
                    { box in box.map { Unmanaged<CollationBox>.fromOpaque($0).release() } })
            if code != SQLITE_OK { Unmanaged<CollationBox>.fromOpaque(box).release() }
            try SQLiteError.check(code, database: handle)
        }
    }
}

/// A Swift function kept alive for SQLite.
private final class FunctionBox: Sendable {
    let body: Connection.ScalarFunction

    init(_ body: @escaping Connection.ScalarFunction) {
        self.body = body
    }
}

/// A Swift comparison kept alive for SQLite.
private final class CollationBox: Sendable {
    let compare: @Sendable (String, String) -> ComparisonResult

    init(_ compare: @escaping @Sendable (String, String) -> ComparisonResult) {
        self.compare = compare
    }
}

extension SQLiteValue {
    /// The value of a function argument.
    init(_ value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let text = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            self = .blob([UInt8](UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value)))))
        default: self = .null
        }
    }

    /// Makes the value a function's result.
    func setResult(of context: OpaquePointer?) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let number): sqlite3_result_int64(context, number)
        case .real(let number): sqlite3_result_double(context, number)
        case .text(var text):
            text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) {
                    sqlite3_result_text(context, $0.baseAddress, Int32($0.count), couchette_sqlite_transient())
                }
            }
        case .blob(let bytes):
            bytes.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), couchette_sqlite_transient()) }
        }
    }
}
