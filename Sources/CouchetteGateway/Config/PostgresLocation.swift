import Foundation

// MARK: - PostgresLocation

/// A PostgreSQL server and database, parsed from a `server` URL of the form
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (`postgresql://` too).
///
/// ```swift
/// let location = try PostgresLocation(parsing: "postgres://sg:secret@db.internal:5432/couchette")
/// location.host          // "db.internal"
/// location.redacted      // "postgres://sg:xxxxx@db.internal:5432/couchette"
/// ```
///
/// Percent-escapes in the user name and password are decoded. Every gateway node with the same URL serves the same
/// data; each gateway database keeps its tables in a PostgreSQL schema of its own name, so several can share one
/// PostgreSQL database.
///
/// TLS follows libpq's `sslmode` and `sslrootcert` query parameters
/// (`postgres://sg@db.internal/couchette?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem`): `prefer` (the
/// default) encrypts when the server offers TLS, `require` insists on it, `verify-ca` also checks the server's
/// certificate against `sslrootcert` (the system's trust roots without it), `verify-full` its name too;
/// `disable` never encrypts.
///
/// `connect_timeout` (libpq's name, in seconds; 10 by default) bounds every wait on the server here, not only
/// connecting: for a connection from the pool, and for each answer. A server that does not answer in time makes the
/// request a 503, and the connection is closed.
///
/// `pool_max_conns` (pgx's name; 24 by default) is how many connections a gateway node's requests open to the
/// database at most: the most statements they have in flight there (one more connection listens for other nodes'
/// commits). Its requests to the database run on that many threads and
/// ``StorageThreads/threadsBeyondConnections`` more.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 unless given).
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if the server asks for one.
    public var password: String?
    /// The PostgreSQL database.
    public var database: String
    /// Whether and how connections use TLS (`sslmode`).
    public var tlsMode: TLSMode
    /// A PEM file of the certificates that may sign the server's (`sslrootcert`), for ``TLSMode/verifyCA`` and
    /// ``TLSMode/verifyFull``; the system's trust roots when nil.
    public var rootCertificatesPath: String?
    /// How long to wait for a connection or an answer before giving up with a 503 (`connect_timeout`).
    public var timeout: Duration
    /// The most connections a gateway node opens to the database (`pool_max_conns`).
    public var maximumConnections: Int

    /// The wait bound when the URL names none.
    public static let defaultTimeout = Duration.seconds(10)
    /// The connection limit when the URL names none.
    public static let defaultMaximumConnections = 24
    /// The `pool_max_conns` values accepted.
    public static let connectionLimitRange = 1...1_000

    /// How a connection uses TLS: libpq's `sslmode` values.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Never.
        case disable
        /// When the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// Always, without checking the server's certificate.
        case require
        /// Always, checking that a trusted authority signed the server's certificate.
        case verifyCA = "verify-ca"
        /// Always, checking the certificate's signer and that it names the host connected to.
        case verifyFull = "verify-full"
    }

    /// Creates a location from its parts.
    public init(
        host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
        tlsMode: TLSMode = .prefer, rootCertificatesPath: String? = nil, timeout: Duration = Self.defaultTimeout,
        maximumConnections: Int = Self.defaultMaximumConnections
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
        self.rootCertificatesPath = rootCertificatesPath
        self.timeout = timeout
        self.maximumConnections = maximumConnections
    }

    /// Parses a `postgres://` URL.
    ///
    /// - Parameter field: The configuration field the URL comes from, named in errors.
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` when a part is missing or malformed (the password
    ///   is never repeated in the message).
    public init(parsing text: String, field: String = "server") throws(GatewayError) {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme)
        else {
            throw .invalidConfig(field: field, problem: "expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        let example = "postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        guard let host = components.host, !host.isEmpty else {
            throw .invalidConfig(field: field, problem: "the PostgreSQL URL needs a host, as in \(example)")
        }
        guard let username = components.percentEncodedUser?.removingPercentEncoding, !username.isEmpty else {
            throw .invalidConfig(field: field, problem: "the PostgreSQL URL needs a user name, as in \(example)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw .invalidConfig(field: field, problem: "the PostgreSQL URL needs a database name, as in \(example)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw .invalidConfig(field: field, problem: "the PostgreSQL port must be between 1 and 65535")
        }
        var tlsMode = TLSMode.prefer
        var rootCertificatesPath: String?
        var timeout = Self.defaultTimeout
        var maximumConnections = Self.defaultMaximumConnections
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    let modes = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .invalidConfig(field: field, problem: "the PostgreSQL sslmode must be one of \(modes)")
                }
                tlsMode = mode
            case "sslrootcert":
                guard let path = item.value, !path.isEmpty else {
                    throw .invalidConfig(field: field, problem: "the PostgreSQL sslrootcert needs a file path")
                }
                rootCertificatesPath = path
            case "connect_timeout":
                guard let seconds = item.value.flatMap(Double.init), seconds > 0, seconds <= 3_600 else {
                    throw .invalidConfig(
                        field: field, problem: "the PostgreSQL connect_timeout must be a number of seconds from 0 to 3600")
                }
                timeout = .milliseconds(Int64(seconds * 1_000))
            case "pool_max_conns":
                guard let count = item.value.flatMap({ Int($0) }), Self.connectionLimitRange.contains(count) else {
                    let range = Self.connectionLimitRange
                    throw .invalidConfig(
                        field: field,
                        problem: "the PostgreSQL pool_max_conns must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                maximumConnections = count
            default:
                throw .invalidConfig(
                    field: field,
                    problem: "unknown PostgreSQL URL parameter \"\(item.name)\" (sslmode, sslrootcert, connect_timeout and pool_max_conns are known)")
            }
        }
        self.init(
            host: host, port: components.port ?? 5432, username: username,
            password: components.percentEncodedPassword?.removingPercentEncoding, database: database,
            tlsMode: tlsMode, rootCertificatesPath: rootCertificatesPath, timeout: timeout,
            maximumConnections: maximumConnections)
    }

    /// The URL, password included (a configuration written back must keep it).
    public var description: String { url(password: password) }

    /// The URL with the password replaced by `xxxxx`, for logs and status output.
    public var redacted: String { url(password: password.map { _ in "xxxxx" }) }

    private func url(password: String?) -> String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.port = port
        components.path = "/" + database
        var query: [URLQueryItem] = []
        if tlsMode != .prefer { query.append(URLQueryItem(name: "sslmode", value: tlsMode.rawValue)) }
        if let rootCertificatesPath { query.append(URLQueryItem(name: "sslrootcert", value: rootCertificatesPath)) }
        if timeout != Self.defaultTimeout {
            let milliseconds = timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000
            let text = milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000)" : "\(Double(milliseconds) / 1_000)"
            query.append(URLQueryItem(name: "connect_timeout", value: text))
        }
        if maximumConnections != Self.defaultMaximumConnections {
            query.append(URLQueryItem(name: "pool_max_conns", value: String(maximumConnections)))
        }
        if !query.isEmpty { components.queryItems = query }
        return components.string ?? "postgres://\(host):\(port)/\(database)"
    }
}
