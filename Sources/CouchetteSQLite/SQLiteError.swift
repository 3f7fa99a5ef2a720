import CSQLite
import Foundation

/// The one error type of `CouchetteSQLite`: a failed SQLite call.
///
/// It carries the extended result code, SQLite's message and the SQL being run when it is
/// known. Bound argument values are never stored, so `description` is safe to log: it holds
/// no user data beyond what the SQL text itself contains.
///
/// Match errors by code with ``SQLiteResultCode``; a primary code matches its whole family:
///
/// ```swift
/// do {
///     try connection.execute("INSERT INTO docs (id) VALUES (?)", id)
/// } catch SQLiteResultCode.constraint {
///     // conflict: the document exists
/// }
/// ```
public struct SQLiteError: Error, Sendable, Hashable {
    // MARK: - Properties

    /// The extended result code, for example `2067` for `SQLITE_CONSTRAINT_UNIQUE`.
    public let code: Int32

    /// SQLite's error message, from `sqlite3_errmsg` (or this module's own message for errors
    /// such as a closed connection).
    public let message: String

    /// The SQL that failed, when known.
    public let sql: String?

    // MARK: - Initialization

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: A primary or extended SQLite result code.
    ///   - message: A message that explains the failure; it should contain no user data.
    ///   - sql: The SQL that failed, if any.
    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Creates an error from a typed result code.
    ///
    /// - Parameters:
    ///   - resultCode: A primary or extended SQLite result code.
    ///   - message: A message that explains the failure; defaults to SQLite's text for the code.
    ///   - sql: The SQL that failed, if any.
    public init(_ resultCode: SQLiteResultCode, message: String? = nil, sql: String? = nil) {
        self.init(
            code: resultCode.rawValue,
            message: message ?? String(cString: sqlite3_errstr(resultCode.rawValue)),
            sql: sql
        )
    }

    // MARK: - Codes

    /// The extended result code as a ``SQLiteResultCode``.
    public var resultCode: SQLiteResultCode {
        SQLiteResultCode(rawValue: code)
    }

    /// The primary result code, for example ``SQLiteResultCode/constraint`` for a UNIQUE
    /// violation.
    public var primaryCode: SQLiteResultCode {
        resultCode.primary
    }
}

// MARK: - Factories

extension SQLiteError {
    /// The error thrown by every use of a connection, or of its statements, after `close()`.
    ///
    /// - Parameters:
    ///   - sql: The SQL that was about to run, if any.
    /// - Returns: An `SQLITE_MISUSE` error whose message reads "connection is closed".
    public static func connectionClosed(sql: String? = nil) -> SQLiteError {
        SQLiteError(.misuse, message: "connection is closed", sql: sql)
    }

    /// An `SQLITE_MISUSE` error for an API used incorrectly.
    ///
    /// - Parameters:
    ///   - message: What went wrong; it must contain no user data.
    ///   - sql: The SQL involved, if any.
    /// - Returns: An `SQLITE_MISUSE` error.
    public static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(.misuse, message: message, sql: sql)
    }
}

// MARK: - CustomStringConvertible

extension SQLiteError: CustomStringConvertible, LocalizedError {
    /// A loggable description: code, message and SQL, never the bound values. For example:
    ///
    /// ```
    /// SQLite error 2067 (constraint failed): UNIQUE constraint failed: docs.id - while executing `INSERT INTO docs (id) VALUES (?)`
    /// ```
    public var description: String {
        var text = "SQLite error \(resultCode): \(message)"
        if let sql {
            text += " - while executing `\(sql)`"
        }
        return text
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? {
        description
    }
}
