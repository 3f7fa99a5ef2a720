/// A value stored in SQLite, in one of its five storage classes.
///
/// See <https://www.sqlite.org/datatype3.html>.
public enum SQLiteValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A 64-bit IEEE floating point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes, possibly empty.
    case blob([UInt8])

    // MARK: - Accessors

    /// Whether the value is `NULL`.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The integer, or `nil` when the value is not an integer.
    public var int64Value: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The integer as an `Int`, or `nil` when the value is not an integer.
    public var intValue: Int? {
        int64Value.map { Int($0) }
    }

    /// The number as a `Double`: a real, or an integer converted; `nil` for other values.
    public var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The text, or `nil` when the value is not text.
    public var stringValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// The bytes, or `nil` when the value is not a blob.
    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { value } else { nil }
    }
}

// MARK: - Literals

extension SQLiteValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    /// Creates `.null`.
    ///
    /// - Parameters:
    ///   - nilLiteral: The `nil` literal.
    public init(nilLiteral: ()) {
        self = .null
    }

    /// Creates an `.integer`.
    ///
    /// - Parameters:
    ///   - value: The integer literal.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }

    /// Creates a `.real`.
    ///
    /// - Parameters:
    ///   - value: The floating point literal.
    public init(floatLiteral value: Double) {
        self = .real(value)
    }

    /// Creates a `.text`.
    ///
    /// - Parameters:
    ///   - value: The string literal.
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}
