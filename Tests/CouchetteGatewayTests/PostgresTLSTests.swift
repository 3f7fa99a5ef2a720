import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - PostgresTLSTests

/// Connections to PostgreSQL use TLS as libpq's `sslmode` says, against the private test server, which offers TLS
/// with a self-signed certificate for `localhost` and `127.0.0.1`.
@Suite("PostgreSQL storage: TLS", .timeLimit(.minutes(3)))
struct PostgresTLSTests {
    /// A new database's URL on the test server, with `query` appended and `localhost` as the host if asked.
    static func url(_ server: PostgresServer, query: String, localhost: Bool = false) async throws -> String {
        var url = try await server.newDatabase()
        if localhost { url = url.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:") }
        return url + query
    }

    /// Opens the storage at `url`, writes and reads a document, and says whether its connection is encrypted.
    static func connectionIsEncrypted(_ url: String) async throws -> Bool {
        try await offCooperativeThreads {
            let storage = try PostgresGatewayStorage(location: PostgresLocation(parsing: url), databaseName: "tls")
            defer { storage.close() }
            let store = DocumentStore(storage: storage)
            let revision = try store.put(id: "doc", body: ["secret": "over TLS"])
            #expect(try store.get(id: "doc")["_rev"] == .string(revision.description))
            let rows = try storage.pool.withConnection { link throws(GatewayError) in
                try link.strings("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            }
            return rows == ["true"]
        }
    }

    @Test("sslmode=require and the default (prefer) encrypt; sslmode=disable does not")
    func modes() async throws {
        let server = try await PostgresServer.sharedServer()
        #expect(try await Self.connectionIsEncrypted(Self.url(server, query: "?sslmode=require")))
        #expect(try await Self.connectionIsEncrypted(Self.url(server, query: "")))
        #expect(try await !Self.connectionIsEncrypted(Self.url(server, query: "?sslmode=disable")))
    }

    @Test("verify-full and verify-ca accept the server's certificate when sslrootcert names its signer")
    func verification() async throws {
        let server = try await PostgresServer.sharedServer()
        let root = "&sslrootcert=\(server.certificatePath)"
        #expect(try await Self.connectionIsEncrypted(Self.url(server, query: "?sslmode=verify-full" + root, localhost: true)))
        #expect(try await Self.connectionIsEncrypted(Self.url(server, query: "?sslmode=verify-ca" + root)))
    }

    @Test("A certificate signed by someone else, or by no trusted authority, is refused with 503")
    func untrustedCertificates() async throws {
        let server = try await PostgresServer.sharedServer()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("couchette-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = folder.appendingPathComponent("other.crt").path
        _ = try await ChildProcess.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder.appendingPathComponent("other.key").path, "-out", other, "-days", "1", "-subj", "/CN=localhost",
        ])
        for query in ["?sslmode=verify-full&sslrootcert=\(other)", "?sslmode=verify-ca"] {
            let url = try await Self.url(server, query: query, localhost: true)
            await #expect {
                try await offCooperativeThreads {
                    _ = try PostgresGatewayStorage(location: PostgresLocation(parsing: url), databaseName: "tls")
                }
            } throws: { error in
                (error as? GatewayError)?.statusCode == 503
            }
        }
        // An unreadable root file is a configuration error, found when the storage opens.
        let missing = try await Self.url(server, query: "?sslmode=verify-full&sslrootcert=\(folder.path)/none.pem")
        #expect(throws: GatewayError.self) {
            try PostgresGatewayStorage(location: PostgresLocation(parsing: missing), databaseName: "tls")
        }
    }

    @Test("sslmode and sslrootcert are read from the URL and written back; anything else is refused")
    func parsing() throws {
        let location = try PostgresLocation(parsing: "postgres://sg:pw@db/couchette?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(location.tlsMode == .verifyFull)
        #expect(location.rootCertificatesPath == "/etc/ca.pem")
        #expect(try PostgresLocation(parsing: location.description) == location)
        #expect(location.redacted == "postgres://sg:xxxxx@db:5432/couchette?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(try PostgresLocation(parsing: "postgres://sg@db/couchette").tlsMode == .prefer)
        for bad in ["?sslmode=sometimes", "?sslmode=", "?sslrootcert=", "?timeout=3"] {
            #expect(throws: GatewayError.self) { try PostgresLocation(parsing: "postgres://sg@db/couchette" + bad) }
        }
    }
}
