import CSQLite

/// A SQLite result code: a primary code such as `SQLITE_BUSY` or an extended code such as
/// `SQLITE_CONSTRAINT_UNIQUE`.
///
/// Extended codes keep their primary code in the low eight bits. A primary code used as a
/// pattern matches every extended code of its family, so `case .constraint` matches
/// `SQLITE_CONSTRAINT_UNIQUE`, while an extended pattern matches only itself:
///
/// ```swift
/// switch error.resultCode {
/// case .constraintForeignKey: // only foreign key violations
/// case .constraint:           // every other constraint violation
/// default: break
/// }
/// ```
///
/// See <https://www.sqlite.org/rescode.html>.
public struct SQLiteResultCode: RawRepresentable, Hashable, Sendable {
    // MARK: - Value

    /// The numeric code, as returned by the SQLite C API.
    public let rawValue: Int32

    /// Creates a result code from its numeric value.
    ///
    /// - Parameters:
    ///   - rawValue: A primary or extended SQLite result code.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code of this code's family: its low eight bits.
    public var primary: SQLiteResultCode {
        SQLiteResultCode(rawValue: rawValue & 0xFF)
    }

    /// Whether this code is a primary code rather than an extended one.
    public var isPrimary: Bool {
        rawValue == rawValue & 0xFF
    }

    // MARK: - Pattern matching

    /// Matches a code against a pattern: a primary pattern matches its whole family, an
    /// extended pattern matches only the identical code.
    ///
    /// - Parameters:
    ///   - pattern: The code written in the `case` clause.
    ///   - code: The code being matched.
    /// - Returns: `true` when `code` belongs to `pattern`.
    public static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern.isPrimary ? pattern == code.primary : pattern == code
    }

    /// Matches any error against a result code, so that `catch SQLiteResultCode.busy` works.
    ///
    /// - Parameters:
    ///   - pattern: The code written in the `case` or `catch` clause.
    ///   - error: The error being matched; only ``SQLiteError`` values can match.
    /// - Returns: `true` when `error` is a ``SQLiteError`` whose code belongs to `pattern`.
    public static func ~= (pattern: SQLiteResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return pattern ~= error.resultCode
    }
}

// MARK: - Primary codes

extension SQLiteResultCode {
    /// `SQLITE_OK`: successful result.
    public static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    /// `SQLITE_ERROR`: generic error, such as an SQL syntax error or a missing table.
    public static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_INTERNAL`: internal logic error in SQLite.
    public static let internalError = SQLiteResultCode(rawValue: SQLITE_INTERNAL)
    /// `SQLITE_PERM`: access permission denied.
    public static let permission = SQLiteResultCode(rawValue: SQLITE_PERM)
    /// `SQLITE_ABORT`: operation aborted, for example by a rollback.
    public static let abort = SQLiteResultCode(rawValue: SQLITE_ABORT)
    /// `SQLITE_BUSY`: the database file is locked by another connection.
    public static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a table is locked by the same connection or a shared cache.
    public static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_NOMEM`: a memory allocation failed.
    public static let noMemory = SQLiteResultCode(rawValue: SQLITE_NOMEM)
    /// `SQLITE_READONLY`: attempt to write a read-only database.
    public static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_INTERRUPT`: operation interrupted by `sqlite3_interrupt`.
    public static let interrupt = SQLiteResultCode(rawValue: SQLITE_INTERRUPT)
    /// `SQLITE_IOERR`: a disk I/O error occurred.
    public static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the database disk image is malformed.
    public static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_NOTFOUND`: unknown opcode or file control.
    public static let notFound = SQLiteResultCode(rawValue: SQLITE_NOTFOUND)
    /// `SQLITE_FULL`: the disk is full.
    public static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: unable to open the database file.
    public static let cantOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_PROTOCOL`: locking protocol error.
    public static let protocolError = SQLiteResultCode(rawValue: SQLITE_PROTOCOL)
    /// `SQLITE_SCHEMA`: the database schema changed.
    public static let schema = SQLiteResultCode(rawValue: SQLITE_SCHEMA)
    /// `SQLITE_TOOBIG`: a string or blob exceeds the size limit.
    public static let tooBig = SQLiteResultCode(rawValue: SQLITE_TOOBIG)
    /// `SQLITE_CONSTRAINT`: a constraint (UNIQUE, NOT NULL, CHECK, FOREIGN KEY…) was violated.
    public static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_MISMATCH`: data type mismatch, such as a non-integer rowid.
    public static let mismatch = SQLiteResultCode(rawValue: SQLITE_MISMATCH)
    /// `SQLITE_MISUSE`: the library was used incorrectly, for example after `close()`.
    public static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_AUTH`: an authorizer callback denied the operation.
    public static let auth = SQLiteResultCode(rawValue: SQLITE_AUTH)
    /// `SQLITE_RANGE`: a parameter index or name is out of range.
    public static let range = SQLiteResultCode(rawValue: SQLITE_RANGE)
    /// `SQLITE_NOTADB`: the file is not a database, or it is encrypted with another key.
    public static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    /// `SQLITE_ROW`: `sqlite3_step` has another row ready.
    public static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    /// `SQLITE_DONE`: `sqlite3_step` has finished executing.
    public static let done = SQLiteResultCode(rawValue: SQLITE_DONE)
}

// MARK: - Extended codes

extension SQLiteResultCode {
    /// `SQLITE_BUSY_RECOVERY`: another connection is recovering a WAL file.
    public static let busyRecovery = SQLiteResultCode(rawValue: SQLITE_BUSY | (1 << 8))
    /// `SQLITE_BUSY_SNAPSHOT`: a read transaction cannot be upgraded to a write transaction
    /// because another connection wrote in the meantime (WAL mode).
    public static let busySnapshot = SQLiteResultCode(rawValue: SQLITE_BUSY | (2 << 8))
    /// `SQLITE_CONSTRAINT_CHECK`: a CHECK constraint failed.
    public static let constraintCheck = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`: a foreign key constraint failed.
    public static let constraintForeignKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    /// `SQLITE_CONSTRAINT_NOTNULL`: a NOT NULL constraint failed.
    public static let constraintNotNull = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a PRIMARY KEY constraint failed.
    public static let constraintPrimaryKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// `SQLITE_CONSTRAINT_UNIQUE`: a UNIQUE constraint failed.
    public static let constraintUnique = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
}

// MARK: - CustomStringConvertible

extension SQLiteResultCode: CustomStringConvertible {
    /// The code's number and SQLite's short English explanation, for example
    /// `2067 (constraint failed)`.
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }
}
