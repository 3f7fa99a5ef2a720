import Foundation

// MARK: - GatewayProcess

/// The `couchette-gateway` executable run as a child process, for tests that kill it.
final class GatewayProcess {
    /// The child.
    let process = Process()
    /// The bound public and admin ports, read from the startup log.
    private(set) var publicPort = 0
    private(set) var adminPort = 0
    private let output = Pipe()

    /// Starts the gateway with a configuration file and waits (reading its log, not sleeping) until both
    /// listeners are bound.
    init(configPath: String) throws {
        process.executableURL = try Self.executableURL()
        process.arguments = [configPath]
        process.standardError = output
        process.standardOutput = output
        try process.run()
        var log = ""
        while publicPort == 0 || adminPort == 0 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw GatewayProcessError.exited(log) }
            log += String(decoding: chunk, as: UTF8.self)
            publicPort = Self.port(after: "Public interface listening on", in: log) ?? 0
            adminPort = Self.port(after: "Admin interface listening on", in: log) ?? 0
        }
    }

    /// Kills the gateway with SIGKILL and waits for it to exit.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the gateway with SIGTERM and waits for it to exit.
    func terminate() {
        process.terminate()
        process.waitUntilExit()
    }

    private static func port(after marker: String, in log: String) -> Int? {
        guard let range = log.range(of: marker) else { return nil }
        let rest = log[range.upperBound...]
        guard let line = rest.split(separator: "\n").first, let colon = line.lastIndex(of: ":") else { return nil }
        return Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// The gateway executable, built next to the test bundle (`make test` builds every product first).
    static func executableURL() throws -> URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("couchette-gateway")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw GatewayProcessError.notBuilt(testBinary.path)
    }
}

// MARK: - GatewayProcessError

/// Why a gateway child process could not be used.
enum GatewayProcessError: Error, CustomStringConvertible {
    case notBuilt(String)
    case exited(String)

    var description: String {
        switch self {
        case .notBuilt(let path): "couchette-gateway is not built next to \(path); run `swift build` first"
        case .exited(let log): "the gateway exited before listening:\n\(log)"
        }
    }
}
