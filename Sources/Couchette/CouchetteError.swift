import CouchetteBLIP
import CouchetteCore

/// The only error Couchette throws. `status` is the code's HTTP status, or the status a remote actually
/// returned; `errorName` is the CouchDB `error` field.
///
/// ```swift
/// do { try something() }
/// catch CouchetteError.Code.conflict { /* re-read and retry */ }
/// catch let error as CouchetteError { print(error.status, error.errorName, error.message) }   // 404 not_found …
/// ```
public struct CouchetteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// A struct with a constant per kind (like Foundation's `URLError.Code`) rather than an enum, so that
    /// `catch CouchetteError.Code.conflict` works: Swift reads an enum case there as an enum pattern, which
    /// cannot match `any Error`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Malformed input: not JSON, a bad revision ID, a bad name (400).
        public static let badInput = Code(rawValue: 1)
        /// Remote credentials are missing or wrong (401).
        public static let unauthorized = Code(rawValue: 2)
        /// The encryption key is missing or wrong, or the file is not a database (401).
        public static let wrongEncryptionKey = Code(rawValue: 3)
        /// A read-only database, or a write the remote rejected (403).
        public static let forbidden = Code(rawValue: 4)
        /// No such database, document or revision (404).
        public static let notFound = Code(rawValue: 5)
        /// A stale parent revision or an existing document (409).
        public static let conflict = Code(rawValue: 6)
        /// A precondition failed, e.g. the copy target exists (412).
        public static let preconditionFailed = Code(rawValue: 7)
        /// The database is closed (500).
        public static let notOpen = Code(rawValue: 8)
        /// The stored data is corrupt (500).
        public static let corrupt = Code(rawValue: 9)
        /// An I/O error (500).
        public static let io = Code(rawValue: 10)
        /// The operation is not supported (501).
        public static let unsupported = Code(rawValue: 11)
        /// A network error reaching a remote (502).
        public static let network = Code(rawValue: 12)
        /// The database is busy (503).
        public static let busy = Code(rawValue: 13)
        /// The operation timed out (504).
        public static let timeout = Code(rawValue: 14)
        /// The operation was cancelled (499).
        public static let cancelled = Code(rawValue: 15)
        /// A remote's TLS certificate is not trusted: not the pinned one, not self-signed when only those are
        /// accepted, or not from a trusted authority (495, as some servers say it). Retrying does not help.
        public static let tlsCertificateUntrusted = Code(rawValue: 16)

        private static let table: [Int: (name: String, status: Int)] = [
            1: ("badInput", 400), 2: ("unauthorized", 401), 3: ("wrongEncryptionKey", 401), 4: ("forbidden", 403),
            5: ("notFound", 404), 6: ("conflict", 409), 7: ("preconditionFailed", 412), 8: ("notOpen", 500),
            9: ("corrupt", 500), 10: ("io", 500), 11: ("unsupported", 501), 12: ("network", 502), 13: ("busy", 503),
            14: ("timeout", 504), 15: ("cancelled", 499), 16: ("tlsCertificateUntrusted", 495),
        ]

        /// The HTTP-style status of this code.
        public var defaultStatus: Int { Code.table[rawValue]?.status ?? 500 }

        public var description: String { Code.table[rawValue]?.name ?? "code \(rawValue)" }

        /// Matches an error against a code, so `catch CouchetteError.Code.conflict` works.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? CouchetteError)?.code == code
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The HTTP-style status: the code's, or what a remote returned.
    public let status: Int
    /// A message for people; it never holds document bodies or secrets.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A message for people.
    ///   - status: The status a remote returned, if different from the code's.
    public init(_ code: Code, message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status ?? code.defaultStatus
    }

    /// Wraps an error of the core value types (bad JSON, revision IDs, attachments, conflicts).
    public init(_ error: CoreError) {
        switch error.code {
        case .conflict: self.init(.conflict, message: error.message)
        default: self.init(.badInput, message: error.message, status: error.status)
        }
    }

    /// The CouchDB `error` field for this error: `"bad_request"`, `"unauthorized"`, `"not_found"`, …
    public var errorName: String {
        switch status {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 406: "not_acceptable"
        case 409: "conflict"
        case 412: "file_exists"
        case 413: "too_large"
        case 415: "bad_content_type"
        default: String(status)
        }
    }

    public var description: String { "\(errorName) (\(status)): \(message)" }
}

extension CouchetteError {
    /// Any error as a ``CouchetteError``: core errors keep their status, others become `.io`.
    static func wrap(_ error: any Error) -> CouchetteError {
        switch error {
        case let error as CouchetteError: error
        case let error as CoreError: CouchetteError(error)
        case BLIPError.refused(let status, let reason): RemoteDatabaseClient.error(status: status, reason: reason)
        default: DatabaseStorage.translate(error)
        }
    }
}

