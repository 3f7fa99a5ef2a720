import Couchette
import Foundation

extension Benchmark {
    /// A Lite database `name` in `directory` (created when missing).
    static func openDatabase(_ name: String, in directory: String) throws -> Database {
        var configuration = DatabaseConfiguration()
        configuration.directory = directory
        return try Database(name: name, config: configuration)
    }

    /// Seconds for one run of our replicator, of `type`, between `database` and the remote database at `url`
    /// (`http(s)://` for REST, `ws(s)://` for BLIP); `batchSize` when given.
    static func replicate(
        _ database: Database, _ type: ReplicatorType, url: String, batchSize: Int? = nil
    ) async throws -> Double {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: url)!))
        config.addCollection(try database.defaultCollection())
        config.replicatorType = type
        if let batchSize { config.batchSize = batchSize }
        let start = ContinuousClock.now
        try await Replicator(config: config).run()
        return seconds(since: start)
    }

    /// Runs `tool` with `arguments` to its end, its output discarded.
    ///
    /// - Throws: when it exits with another status than 0.
    static func runTool(_ tool: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CouchetteError(
                .io, message: "\(tool.lastPathComponent) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
    }
}
