import CouchetteTestSupport
import Foundation
import Testing

// MARK: - PostgresServerTests

/// The private PostgreSQL server the PostgreSQL storage tests run against (issue 20): a real server, started by the
/// tests on a free port, with one new database per test.
@Suite("Private PostgreSQL server", .timeLimit(.minutes(3)))
struct PostgresServerTests {
    @Test("Starts on a free loopback port and gives each test its own database, which stores and reads rows")
    func startsAndServesDatabases() async throws {
        let server = try await PostgresServer.sharedServer()
        let first = try await server.newDatabase()
        let second = try await server.newDatabase()
        #expect(first != second)
        #expect(first.hasPrefix("postgres://\(PostgresServer.user)@127.0.0.1:\(server.port)/"))
        let name = try #require(first.split(separator: "/").last.map(String.init))
        let rows = try server.psql(
            "CREATE TABLE t (k text PRIMARY KEY, v integer); INSERT INTO t VALUES ('a', 1), ('b', 2); "
                + "SELECT k || '=' || v FROM t ORDER BY k;", database: name)
        #expect(rows.split(separator: "\n") == ["a=1", "b=2"])
        let otherName = try #require(second.split(separator: "/").last.map(String.init))
        let tables = try server.psql("SELECT count(*) FROM pg_tables WHERE tablename = 't';", database: otherName)
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(try PostgresServer.shared() === server)
    }
}
