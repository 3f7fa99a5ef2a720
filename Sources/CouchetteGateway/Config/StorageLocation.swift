// MARK: - StorageLocation

/// Where a database keeps its data, parsed from the database's `server` key.
///
/// ```swift
/// try StorageLocation(parsing: "walrus:")                // .memory
/// try StorageLocation(parsing: "walrus:.")               // .directory(".")
/// try StorageLocation(parsing: "walrus:/var/lib/sg")     // .directory("/var/lib/sg")
/// try StorageLocation(parsing: "sqlite:/data/todo.db")   // .file("/data/todo.db")
/// try StorageLocation(parsing: "postgres://sg:pw@db/sg")  // .postgres(…), shared by several gateway nodes
/// try StorageLocation(parsing: "http://localhost:8091")  // throws: Couchbase Server is not supported
/// ```
///
/// Spec: gateway-rest-api.md §17.2.
public enum StorageLocation: Sendable, Hashable, CustomStringConvertible {
    /// In memory, lost at exit (`walrus:` or `sqlite::memory:`).
    case memory
    /// Files in a directory, one per database (`walrus:<dir>`).
    case directory(String)
    /// One SQLite database file (`sqlite:<path>`).
    case file(String)
    /// A PostgreSQL database (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`), which several gateway nodes can serve.
    case postgres(PostgresLocation)

    /// Whether the storage is across a network (PostgreSQL), where one call may wait for as long as the network
    /// makes it.
    public var isRemote: Bool {
        if case .postgres = self { return true }
        return false
    }

    // MARK: - Parsing

    /// Parses a `server` URL.
    ///
    /// - Parameters:
    ///   - text: The `server` value.
    ///   - field: The configuration field it comes from, named in errors.
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` naming `field` for unsupported schemes.
    public init(parsing text: String, field: String = "server") throws(GatewayError) {
        let trimmed = String(text.trimmingWhitespace())
        if let path = Self.remainder(of: trimmed, afterScheme: "walrus") {
            let directory = Self.stripSlashes(path)
            self = directory.isEmpty ? .memory : .directory(directory)
        } else if let path = Self.remainder(of: trimmed, afterScheme: "sqlite") {
            let file = Self.stripSlashes(path)
            if file.isEmpty {
                throw .invalidConfig(
                    field: field, problem: "\"\(text)\" needs a file path, e.g. \"sqlite:/data/db.sqlite\"")
            }
            self = file == ":memory:" ? .memory : .file(file)
        } else if ["postgres:", "postgresql:"].contains(where: { trimmed.lowercased().hasPrefix($0) }) {
            self = .postgres(try PostgresLocation(parsing: trimmed, field: field))
        } else {
            let scheme = trimmed.split(separator: ":", maxSplits: 1).first.map(String.init) ?? trimmed
            let known = ["http", "https", "couchbase", "couchbases"].contains(scheme.lowercased())
            let advice = #"use "walrus:", "walrus:<directory>", "sqlite:<file>" or "postgres://user:password@host/database""#
            let problem =
                known
                ? "Couchbase Server (\"\(text)\") is not supported; \(advice)"
                : "unsupported server URL \"\(text)\"; \(advice)"
            throw .invalidConfig(field: field, problem: problem)
        }
    }

    /// The text after `scheme:` if `text` starts with it (case-insensitively).
    private static func remainder(of text: String, afterScheme scheme: String) -> String? {
        let prefix = scheme + ":"
        guard text.lowercased().hasPrefix(prefix) else { return nil }
        return String(text.dropFirst(prefix.count))
    }

    /// Turns the URL-style `//host/path` forms into a plain path: `///data` → `/data`, `//` → empty.
    private static func stripSlashes(_ path: String) -> String {
        guard path.hasPrefix("//") else { return path }
        return String(path.dropFirst(2))
    }

    // MARK: - Description

    /// The location as a `server` URL.
    public var description: String {
        switch self {
        case .memory: "walrus:"
        case .directory(let path): "walrus:\(path)"
        case .file(let path): "sqlite:\(path)"
        case .postgres(let location): location.description
        }
    }

    /// The location as a `server` URL without its password, for logs and status output.
    public var redacted: String {
        if case .postgres(let location) = self { return location.redacted }
        return description
    }
}
