import CouchetteTestSupport
import Foundation

// MARK: - GatewayProcess

/// The `couchette-gateway` executable run as a child process, for tests that kill it.
final class GatewayProcess: @unchecked Sendable {
    /// The child.
    let child: ChildProcess
    /// The bound public and admin ports, read from the startup log.
    let publicPort: Int
    let adminPort: Int

    /// Starts the gateway with a configuration file and waits (reading its log, not sleeping, at most `limit`)
    /// until both listeners are bound.
    convenience init(configPath: String, within limit: Duration = .seconds(60)) throws {
        try self.init(arguments: [configPath], within: limit)
    }

    /// Starts the gateway with command-line `arguments` (a configuration file, flags) and waits until both listeners
    /// are bound.
    init(arguments: [String], within limit: Duration = .seconds(60)) throws {
        child = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), arguments)
        do {
            let log = try child.waitForOutput(within: limit) { log in
                Self.port(after: "Public interface listening on", in: log) != nil
                    && Self.port(after: "Admin interface listening on", in: log) != nil
            }
            publicPort = Self.port(after: "Public interface listening on", in: log)!
            adminPort = Self.port(after: "Admin interface listening on", in: log)!
        } catch {
            child.kill()
            throw error
        }
    }

    /// Starts the gateway as ``init(arguments:within:)`` does, waiting for its listeners on a thread of its own:
    /// tests are async, and a wait on one of Swift's cooperative threads holds it from every other test meanwhile.
    static func start(arguments: [String], within limit: Duration = .seconds(60)) async throws -> GatewayProcess {
        try await offCooperativeThreads { try GatewayProcess(arguments: arguments, within: limit) }
    }

    /// Starts the gateway with a configuration file, as ``start(arguments:within:)`` does.
    static func start(configPath: String, within limit: Duration = .seconds(60)) async throws -> GatewayProcess {
        try await start(arguments: [configPath], within: limit)
    }

    /// Kills the gateway with SIGKILL and waits for it to exit.
    func kill() {
        child.kill()
    }

    /// Stops the gateway with SIGTERM and waits for it to exit (killing it after 30 s).
    func terminate() {
        child.terminate()
    }

    private static func port(after marker: String, in log: String) -> Int? {
        guard let range = log.range(of: marker) else { return nil }
        let rest = log[range.upperBound...]
        guard let line = rest.split(separator: "\n").first, let colon = line.lastIndex(of: ":") else { return nil }
        return Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}
