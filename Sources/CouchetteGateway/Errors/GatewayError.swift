import Foundation

// MARK: - GatewayError

/// The gateway's one error type: a status, an error name and a human-readable reason.
///
/// Every failure of the gateway, from a malformed configuration file to an unknown URL, is a `GatewayError`;
/// storage (SQLite and PostgreSQL), the sync function and configuration translate their failures into it where
/// they happen. The status is the CouchDB protocol's (it also appears in `_bulk_docs` rows and in the sync
/// function's `reject(status, …)`), but the type holds no HTTP machinery: the HTTP layer alone turns an error
/// into a response, in one place (`GatewayError+HTTPResponseError.swift`: the status line, the body
/// `{"error": NAME, "reason": REASON}` of spec gateway-rest-api.md §1.4, and headers from ``remedy`` and the
/// status).
///
/// ```swift
/// throw GatewayError.noSuchDatabase("nope")
/// // 404 {"error":"not_found","reason":"no such database \"nope\""}
/// ```
///
/// Configuration errors name the field they are about:
///
/// ```swift
/// GatewayError.invalidConfig(field: "databases.todo.revs_limit", problem: "expected an integer").reason
/// // "databases.todo.revs_limit: expected an integer"
/// ```
public struct GatewayError: Error, Sendable, Equatable {
    // MARK: - Properties

    /// The HTTP status code, e.g. `404`.
    public var statusCode: Int

    /// The error name of the JSON body: `"not_found"` for 404, `"conflict"` for 409, otherwise the HTTP reason
    /// phrase (`"Bad Request"`, `"Forbidden"`, …).
    public var error: String

    /// The human-readable explanation, e.g. `no such database "nope"`.
    public var reason: String

    /// The configuration field the error is about, e.g. `databases.todo.revs_limit`, when there is one.
    public var field: String?

    /// What a client can do about the error besides reading it (a response header says it), when there is something.
    public var remedy: Remedy?

    /// What a client can do about an error.
    public enum Remedy: Sendable, Equatable {
        /// Use one of these methods (405; `Allow`).
        case allowedMethods([String])
        /// Try again after this many seconds (429; `Retry-After`).
        case retryAfter(seconds: Int)
        /// Ask for a range within this many bytes (416; `Content-Range: bytes */N`).
        case rangeWithin(length: Int)
    }

    // MARK: - Initialisers

    /// Creates an error with a status code and a reason; the error name follows Sync Gateway's rule.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - reason: The human-readable explanation.
    ///   - remedy: What the client can do about it.
    public init(statusCode: Int, reason: String, remedy: Remedy? = nil) {
        self.statusCode = statusCode
        self.error = Self.errorName(forStatus: statusCode)
        self.reason = reason
        self.field = nil
        self.remedy = remedy
    }

    // MARK: - Factories

    /// 400 Bad Request.
    public static func badRequest(_ reason: String) -> GatewayError {
        GatewayError(statusCode: 400, reason: reason)
    }

    /// 401 Unauthorized (its response carries the `WWW-Authenticate` challenge Couchbase Lite expects).
    public static func unauthorized(_ reason: String = "Login required") -> GatewayError {
        GatewayError(statusCode: 401, reason: reason)
    }

    /// 403 Forbidden.
    public static func forbidden(_ reason: String = "forbidden") -> GatewayError {
        GatewayError(statusCode: 403, reason: reason)
    }

    /// 404 with a custom reason.
    public static func notFound(_ reason: String = "missing") -> GatewayError {
        GatewayError(statusCode: 404, reason: reason)
    }

    /// 404 `unknown URL`: no route matches the path.
    public static let unknownURL = GatewayError(statusCode: 404, reason: "unknown URL")

    /// 404 `no such database "name"`.
    public static func noSuchDatabase(_ name: String) -> GatewayError {
        GatewayError(statusCode: 404, reason: "no such database \"\(name)\"")
    }

    /// 405 Method Not Allowed, with the allowed methods (its response's `Allow` header).
    public static func methodNotAllowed(_ method: String, allowed: [String]) -> GatewayError {
        GatewayError(statusCode: 405, reason: "\(method) is not allowed", remedy: .allowedMethods(allowed))
    }

    /// 409 conflict.
    public static func conflict(_ reason: String = "Document update conflict") -> GatewayError {
        GatewayError(statusCode: 409, reason: reason)
    }

    /// 412 Precondition Failed.
    public static func preconditionFailed(_ reason: String) -> GatewayError {
        GatewayError(statusCode: 412, reason: reason)
    }

    /// 413 Request Entity Too Large.
    public static func payloadTooLarge(_ reason: String = "Request body too large") -> GatewayError {
        GatewayError(statusCode: 413, reason: reason)
    }

    /// 415 Unsupported Media Type.
    public static func unsupportedMediaType(_ reason: String) -> GatewayError {
        GatewayError(statusCode: 415, reason: reason)
    }

    /// 500 Internal Server Error.
    public static func internalError(_ reason: String) -> GatewayError {
        GatewayError(statusCode: 500, reason: reason)
    }

    /// 429 Too Many Requests, to retry after a delay in whole seconds (at least 1; its response's `Retry-After`).
    public static func tooManyRequests(_ reason: String, retryAfter: Duration) -> GatewayError {
        let seconds = retryAfter.components.seconds + (retryAfter.components.attoseconds > 0 ? 1 : 0)
        return GatewayError(statusCode: 429, reason: reason, remedy: .retryAfter(seconds: Int(max(1, seconds))))
    }

    /// 416 Requested Range Not Satisfiable: a byte range outside a body of `length` bytes.
    public static func rangeNotSatisfiable(length: Int) -> GatewayError {
        GatewayError(statusCode: 416, reason: "Requested range not satisfiable", remedy: .rangeWithin(length: length))
    }

    /// 406 Not Acceptable: no representation the request's `Accept` allows.
    public static func notAcceptable(_ reason: String = "Response format not acceptable") -> GatewayError {
        GatewayError(statusCode: 406, reason: reason)
    }

    /// 503 Service Unavailable.
    public static func serviceUnavailable(_ reason: String) -> GatewayError {
        GatewayError(statusCode: 503, reason: reason)
    }

    /// 400: a configuration value is malformed. The reason is `"<field>: <problem>"`.
    ///
    /// - Parameters:
    ///   - field: The dotted path of the field, e.g. `databases.todo.users.user1.password`; empty for the whole file.
    ///   - problem: What is wrong, e.g. `expected a string, found a number`.
    public static func invalidConfig(field: String, problem: String) -> GatewayError {
        var error = GatewayError(statusCode: 400, reason: field.isEmpty ? problem : "\(field): \(problem)")
        error.field = field
        return error
    }

    // MARK: - Error names

    /// The CouchDB error name used for per-item errors in `_bulk_docs`, `_bulk_get` and `_all_docs`
    /// (gateway-rest-api.md §1.4): `bad_request`, `forbidden`, `conflict`, …, or the status as text.
    public static func couchErrorName(forStatus status: Int) -> String {
        switch status {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 406: "not_acceptable"
        case 409: "conflict"
        case 412: "file_exists"
        case 415: "bad_content_type"
        default: String(status)
        }
    }

    /// Sync Gateway's error name for a status: `not_found` for 404, `conflict` for 409, otherwise the reason phrase
    /// Go's `net/http` uses for the status.
    public static func errorName(forStatus status: Int) -> String {
        switch status {
        case 404: "not_found"
        case 409: "conflict"
        default: reasonPhrase(forStatus: status)
        }
    }

    /// The reason phrase for a status, spelled as Go's `http.StatusText` (which Sync Gateway uses); the number
    /// for a status Go does not name.
    public static func reasonPhrase(forStatus status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Request Entity Too Large"
        case 414: "Request URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Requested Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 418: "I'm a teapot"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Entity"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 506: "Variant Also Negotiates"
        case 507: "Insufficient Storage"
        case 508: "Loop Detected"
        case 510: "Not Extended"
        case 511: "Network Authentication Required"
        default: String(status)
        }
    }
}

// MARK: - CustomStringConvertible

extension GatewayError: CustomStringConvertible {
    /// `"<status> <name>: <reason>"`, e.g. `404 not_found: unknown URL`.
    public var description: String {
        "\(statusCode) \(error): \(reason)"
    }
}

// MARK: - LocalizedError

extension GatewayError: LocalizedError {
    /// The reason, so that command-line tools print the message alone.
    public var errorDescription: String? { reason }
}
