import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

// MARK: - GatewayCommandLineTests

/// `couchette-gateway` takes Sync Gateway's flags, with one dash or two: without a configuration file it serves the
/// `--dbname` database at `--url`, as the seeds' `sync_gateway --dbname=todo` does.
@Suite("couchette-gateway's command line", .timeLimit(.minutes(2)))
struct GatewayCommandLineTests {
    @Test("-dbname=todo with Sync Gateway's single-dash flags serves a walrus: database named todo")
    func singleDashFlags() async throws {
        let gateway = try await GatewayProcess.start(arguments: [
            "-dbname=todo", "-interface=127.0.0.1:0", "-adminInterface", "127.0.0.1:0", "-pretty", "-log=CRUD,HTTP",
        ])
        defer { gateway.terminate() }
        let client = HTTPTestClient()
        defer { client.close() }
        let databases = try await client.send(port: gateway.adminPort, path: "/_all_dbs")
        #expect(try databases.jsonValue() == ["todo"])
        #expect(databases.text.contains("\n"), "-pretty indents responses: \(databases.text)")
        let put = try await client.send("PUT", port: gateway.adminPort, path: "/todo/doc", json: ["channels": ["a"]])
        #expect(put.status == 201)
        // GUEST is off without a configuration: the public port asks for a login.
        #expect(try await client.send(port: gateway.publicPort, path: "/todo/doc").status == 401)
    }

    @Test("--dbname and --url with two dashes; the database's default name is db")
    func doubleDashFlags() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = HTTPTestClient()
        defer { client.close() }
        let named = try await GatewayProcess.start(arguments: [
            "--dbname", "lists", "--url", "walrus:\(folder.path)", "--interface", "127.0.0.1:0",
            "--adminInterface=127.0.0.1:0",
        ])
        #expect(try await client.send(port: named.adminPort, path: "/_all_dbs").jsonValue() == ["lists"])
        named.terminate()
        #expect(FileManager.default.fileExists(atPath: folder.path))

        let plain = try await GatewayProcess.start(arguments: ["--interface", "127.0.0.1:0", "--admin-interface", "127.0.0.1:0"])
        defer { plain.terminate() }
        #expect(try await client.send(port: plain.adminPort, path: "/_all_dbs").jsonValue() == ["db"])
    }

    @Test("--help lists Sync Gateway's flags")
    func help() async throws {
        let child = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), ["--help"])
        #expect(try await child.waitForExit(within: .seconds(30)) == 0)
        for flag in ["--dbname", "--url", "--interface", "--adminInterface", "--log", "--pretty", "--verbose"] {
            #expect(child.output.contains(flag), "\(flag) in \(child.output)")
        }
    }

    @Test("A port in use is one clear line and exit 1")
    func portInUse() async throws {
        let first = try await GatewayProcess.start(arguments: ["--interface", "127.0.0.1:0", "--adminInterface", "127.0.0.1:0"])
        defer { first.terminate() }
        let second = try ChildProcess(
            try ChildProcess.builtProduct("couchette-gateway"),
            ["--interface", "127.0.0.1:\(first.publicPort)", "--adminInterface", "127.0.0.1:0"])
        #expect(try await second.waitForExit(within: .seconds(30)) == 1)
        let errors = second.output.split(separator: "\n").filter { $0.hasPrefix("couchette-gateway: error:") }
        #expect(errors.count == 1, "\(second.output)")
        #expect(errors.first?.contains("port \(first.publicPort) is already in use; set \"interface\"") == true)
    }
}
