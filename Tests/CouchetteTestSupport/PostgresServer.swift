import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - PostgresServer

/// A private PostgreSQL server for tests: Debian's `postgresql` binaries, a new cluster (`initdb`) in a temporary
/// folder, started with `pg_ctl` on a free loopback port and stopped (and its folder removed) by ``stop()`` or at
/// process exit. Nothing is shared with a system server.
///
/// PostgreSQL refuses to run as root, so when the tests do, the cluster belongs to `nobody` and every server
/// command runs through `runuser -u nobody`.
///
/// ```swift
/// let server = try PostgresServer.shared()
/// let url = try server.createDatabase()   // postgres://couchette@127.0.0.1:PORT/test_1
/// ```
public final class PostgresServer: Sendable {
    /// The cluster's superuser (trust authentication on loopback: no password).
    public static let user = "couchette"

    /// The loopback port the server listens on.
    public let port: Int
    /// The cluster's folder (data and Unix socket).
    public let directory: URL
    private let binaries: URL
    /// Whether ``stop()`` ran, and how many databases ``createDatabase()`` made.
    private let state = Mutex((stopped: false, databaseCount: 0))

    // MARK: - Starting

    /// The server of this test process, started on first use.
    public static func shared() throws -> PostgresServer {
        try sharedState.withLock { state in
            if let server = state.server { return server }
            if let failure = state.failure { throw failure }
            do {
                let server = try PostgresServer()
                state.server = server
                atexit { PostgresServer.sharedState.withLock { $0.server }?.stop() }
                return server
            } catch {
                state.failure = error
                throw error
            }
        }
    }

    private struct SharedState: @unchecked Sendable {  // errors are only read and rethrown
        var server: PostgresServer?
        var failure: (any Error)?
    }

    private static let sharedState = Mutex(SharedState())

    /// Makes a cluster and starts its server.
    ///
    /// - Throws: ``ChildProcess/Failure`` naming what is missing (the `postgresql` package) or what failed.
    public init() throws {
        binaries = try Self.locateBinaries()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("couchette-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "nobody"], ofItemAtPath: directory.path)
        }
        port = try freeLoopbackPort()
        let data = directory.appendingPathComponent("data").path
        _ = try run("initdb", ["-D", data, "-U", Self.user, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        try Self.makeCertificate(in: directory)
        // TLS is offered, not required: connections choose (sslmode).
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=500"
            + " -c ssl=on -c ssl_cert_file=\(certificatePath) -c ssl_key_file=\(directory.path)/server.key"
        try start(["-D", data, "-o", options, "-l", directory.appendingPathComponent("log").path, "-w", "-t", "60", "start"])
    }

    /// The server's self-signed certificate (PEM, for `localhost` and `127.0.0.1`): the root a client verifying
    /// it trusts (`sslrootcert`).
    public var certificatePath: String { directory.appendingPathComponent("server.crt").path }

    /// A self-signed certificate and its key for the server, made with `openssl`; the key readable by the server's
    /// user alone, as PostgreSQL requires.
    private static func makeCertificate(in directory: URL) throws {
        let key = directory.appendingPathComponent("server.key").path
        _ = try ChildProcess.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", directory.appendingPathComponent("server.crt").path, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        if getuid() == 0 { attributes[.ownerAccountName] = "nobody" }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: key)
    }

    /// Runs `pg_ctl start`, which returns once the server accepts connections (or gives up after its `-t`).
    private func start(_ arguments: [String]) throws {
        do {
            _ = try run("pg_ctl", arguments)
        } catch {
            let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            throw ChildProcess.Failure(description: "\(error)\n\(log)")
        }
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Stops the server at once and removes its folder; later calls do nothing.
    public func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        _ = try? run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Off Swift's cooperative threads

    /// ``shared()`` for async tests: starting the server takes seconds of waiting for `initdb` and `pg_ctl`, which
    /// must not hold one of Swift's few cooperative threads (every other test's tasks would stall meanwhile).
    public static func sharedServer() async throws -> PostgresServer {
        try await CouchetteTestSupport.offCooperativeThreads { try shared() }
    }

    /// ``createDatabase()`` for async tests, waiting for `createdb` on a thread of its own.
    public func newDatabase() async throws -> String {
        try await CouchetteTestSupport.offCooperativeThreads { try self.createDatabase() }
    }

    // MARK: - Databases

    /// Creates a new, empty database and returns its URL, in the form a gateway config's `server` takes.
    public func createDatabase() throws -> String {
        let name = state.withLock { state in
            state.databaseCount += 1
            return "test_\(state.databaseCount)"
        }
        _ = try run("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", Self.user, name])
        return "postgres://\(Self.user)@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL with `psql` in a database and returns its unaligned, tuples-only output.
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run("psql", [
            "-h", "127.0.0.1", "-p", String(port), "-U", Self.user, "-d", database, "-X", "-q", "-A", "-t",
            "-v", "ON_ERROR_STOP=1", "-c", sql,
        ])
    }

    // MARK: - Helpers

    /// Runs one of the server's programs, as `nobody` when the tests run as root, and returns what it printed.
    ///
    /// It is spawned and reaped here with `posix_spawn` and `waitpid`, its output going to a file: not through
    /// Foundation's `Process`, which does not see `runuser` exit once `pg_ctl` has forked the server (holding its
    /// pipes), and whose dispatch sources, with many tests creating databases at once, crashed libdispatch.
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        var command = [binaries.appendingPathComponent(program).path] + arguments
        if getuid() == 0 { command = ["runuser", "-u", "nobody", "--"] + command }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let quoted: String = command.map(Self.shellQuoted).joined(separator: " ")
        let script: String = "exec \(quoted) </dev/null >\(Self.shellQuoted(output)) 2>&1"
        let parts: [String] = ["/bin/sh", "-c", script]
        let argv: [UnsafeMutablePointer<CChar>?] = parts.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else {
            throw ChildProcess.Failure(description: "cannot start \(program)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw ChildProcess.Failure(
                description: "\(command.joined(separator: " ")) exited with \(status): \(printed)")
        }
        return printed
    }

    /// The folder of `initdb` and `pg_ctl`: `$COUCHETTE_PG_BIN`, the newest `/usr/lib/postgresql/*/bin` (Debian),
    /// or the folder of an `initdb` on `PATH`.
    private static func locateBinaries() throws -> URL {
        let fileManager = FileManager.default
        if let configured = ProcessInfo.processInfo.environment["COUCHETTE_PG_BIN"] {
            return URL(fileURLWithPath: configured)
        }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: debian)) ?? []).compactMap(Int.init).sorted()
        if let newest = versions.last, fileManager.isExecutableFile(atPath: "\(debian)/\(newest)/bin/initdb") {
            return URL(fileURLWithPath: "\(debian)/\(newest)/bin")
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(folder)/initdb"
            if fileManager.isExecutableFile(atPath: path) {
                return URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent()
            }
        }
        throw ChildProcess.Failure(
            description: "PostgreSQL's initdb was not found: install Debian's `postgresql` package (make deps does)")
    }
}
