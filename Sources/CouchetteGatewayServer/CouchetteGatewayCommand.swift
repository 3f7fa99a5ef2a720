import ArgumentParser
import CouchetteGateway
import Foundation
import Logging

// MARK: - CouchetteGatewayCommand

/// `couchette-gateway [CONFIG] [flags]`: serves the gateway until SIGINT or SIGTERM, then exits 0. Takes Sync
/// Gateway's flags, with one dash or two (`-dbname=todo`, `--dbname todo`): without a configuration file it serves one
/// database, `--dbname` (default `db`) at `--url` (default `walrus:`), so the seeds' `sync_gateway --dbname=todo`
/// works as `couchette-gateway --dbname=todo`. A missing or malformed configuration prints one line naming the
/// problem and exits 1.
@main
struct CouchetteGatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "couchette-gateway",
        abstract: "A Couchbase Sync Gateway 1.4 compatible server.",
        discussion: """
            Reads a Sync Gateway JSON configuration file; without one, serves the database --dbname at --url.
            Flags take one dash or two, as Sync Gateway's do.
            """,
        version: GatewayVersion.versionString
    )

    // MARK: - Arguments

    @Argument(help: "Path of the Sync Gateway JSON configuration file.")
    var config: String?

    @Option(
        name: Self.names("interface"),
        help: "Public listen address, e.g. ':4984' (overrides the config's 'interface').")
    var interface: String?

    @Option(
        name: [.customLong("adminInterface"), .customLong("adminInterface", withSingleDash: true), .customLong("admin-interface")],
        help: "Admin listen address, e.g. '127.0.0.1:4985' (overrides the config's 'adminInterface').")
    var adminInterface: String?

    @Option(name: Self.names("dbname"), help: "Without a configuration file: the database's name.")
    var dbname = "db"

    @Option(
        name: Self.names("url"),
        help: "Without a configuration file: the database's storage, 'walrus:' (memory), 'walrus:DIR' or 'sqlite:PATH'.")
    var url = "walrus:"

    @Option(name: Self.names("log"), help: "Log keys to enable, comma-separated (e.g. 'HTTP,CRUD,Changes').")
    var log: String?

    @Flag(name: Self.names("pretty"), help: "Pretty-print JSON responses.")
    var pretty = false

    @Flag(name: Self.names("verbose"), help: "Log at debug level.")
    var verbose = false

    /// `--name` and `-name`, as Go's flag package takes Sync Gateway's flags.
    static func names(_ name: String) -> NameSpecification {
        [.customLong(name), .customLong(name, withSingleDash: true)]
    }

    // MARK: - Running

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        var logger = Logger(label: "couchette.gateway")
        logger.logLevel = verbose ? .debug : .info

        let server: GatewayServer
        do {
            server = try GatewayServer(config: try loadConfig(), logger: logger)
        } catch {
            Self.printError(error)
            throw ExitCode.failure
        }
        do {
            try await server.runService()
        } catch {
            Self.printError(error)
            throw ExitCode.failure
        }
    }
}
