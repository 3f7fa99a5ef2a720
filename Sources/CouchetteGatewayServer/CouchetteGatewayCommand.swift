import ArgumentParser
import CouchetteGateway
import Foundation
import Logging

// MARK: - CouchetteGatewayCommand

/// `couchette-gateway [CONFIG] [--interface ADDR] [--admin-interface ADDR]`: serves the gateway until SIGINT or
/// SIGTERM, then exits 0. A missing or malformed configuration prints one line naming the problem and exits 1.
@main
struct CouchetteGatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "couchette-gateway",
        abstract: "A Couchbase Sync Gateway 1.4 compatible server.",
        discussion: "Reads a Sync Gateway JSON configuration file; without one, serves no databases.",
        version: GatewayVersion.versionString
    )

    // MARK: - Arguments

    @Argument(help: "Path of the Sync Gateway JSON configuration file.")
    var config: String?

    @Option(help: "Public listen address, e.g. ':4984' (overrides the config's 'interface').")
    var interface: String?

    @Option(help: "Admin listen address, e.g. '127.0.0.1:4985' (overrides the config's 'adminInterface').")
    var adminInterface: String?

    @Flag(help: "Log at debug level.")
    var verbose = false

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
