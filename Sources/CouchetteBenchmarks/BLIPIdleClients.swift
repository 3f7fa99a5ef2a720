import CouchetteBLIP
import Foundation
import Logging
import Synchronization
import WSClient

/// Idle continuous BLIP subscriptions, for `blip.feeds-kb`: each a WebSocket to a `_blipsync` endpoint with a
/// ``BLIPConnection`` that subscribes (`subChanges`, continuous) and is open once the gateway said it is caught up
/// (`changes []`); the least a Couchbase Lite client holds open. They run in a child process (this executable with
/// `BENCH_BLIP_CLIENTS` set, ``Remote``) so that what the gateway's side costs is measured alone.
final class BLIPIdleClients: Sendable {
    private let sockets = Mutex<[Task<Void, Never>]>([])
    private let connections = Mutex<[BLIPConnection]>([])

    /// Opens `count` subscriptions to `url` (`ws://…/{db}/_blipsync`), a hundred at a time; returns once every one
    /// is caught up.
    static func open(count: Int, url: String) async throws -> BLIPIdleClients {
        let clients = BLIPIdleClients()
        for first in stride(from: 0, to: count, by: 100) {
            let (caughtUp, signal) = AsyncStream<Void>.makeStream()
            let batch = min(100, count - first)
            for _ in 0..<batch { clients.connect(url: url, caughtUp: signal) }
            var ready = 0
            for await _ in caughtUp {
                ready += 1
                if ready == batch { break }
            }
            guard ready == batch else { throw CancellationError() }
        }
        return clients
    }

    /// With `BENCH_BLIP_BARE` set, each client answers one `getCheckpoint` and subscribes to nothing: what a BLIP
    /// connection alone costs the gateway, for comparison (`BENCH_ONLY=blip-feeds`).
    static let bareConnections = ProcessInfo.processInfo.environment["BENCH_BLIP_BARE"] != nil

    private func connect(url: String, caughtUp: AsyncStream<Void>.Continuation) {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 20
        configuration.additionalHeaders[.secWebSocketProtocol] = BLIPSubprotocol.couchbaseMobile3
        var logger = Logger(label: "couchette.bench.blip")
        logger.logLevel = .critical
        let settings = configuration
        let task = Task {
            _ = try? await WebSocketClient.connect(url: url, configuration: settings, logger: logger) { inbound, outbound, _ in
                let transport = WebSocketBLIPTransport(outbound: outbound)
                let connection = BLIPConnection(transport: transport) { request, _ in
                    if request.profile == "changes", request.body == Array("[]".utf8) { caughtUp.yield() }
                    return request.reply(body: Array("[]".utf8))
                }
                self.connections.withLock { $0.append(connection) }
                if Self.bareConnections {
                    Task {
                        _ = try? await connection.send(properties: ["Profile": "getCheckpoint", "client": "bench"])
                        caughtUp.yield()
                    }
                } else {
                    Task { _ = try? await connection.send(properties: ["Profile": "subChanges", "continuous": "true"]) }
                }
                await transport.feed(inbound, to: connection, maximumFrameSize: 1 << 20)
            }
        }
        sockets.withLock { $0.append(task) }
    }

    /// Closes every subscription and waits for the sockets to end.
    func close() async {
        for connection in connections.withLock({ $0 }) { await connection.close() }
        for socket in sockets.withLock({ $0 }) { await socket.value }
    }

    // MARK: - In a child process

    /// Runs the child's side when `BENCH_BLIP_CLIENTS` is `count url`: opens the subscriptions, prints `ready`, and
    /// exits when its standard input closes (the parent is done or gone); never returns then.
    static func runChildIfAsked() async throws {
        guard let spec = ProcessInfo.processInfo.environment["BENCH_BLIP_CLIENTS"] else { return }
        let parts = spec.split(separator: " ").map(String.init)
        guard parts.count == 2, let count = Int(parts[0]) else { exit(2) }
        _ = ChangesBenchmark.raiseFileLimit(to: count * 2 + 100)
        _ = try await open(count: count, url: parts[1])
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) > 0 {}
        exit(0)
    }

    /// Subscriptions held by a child process.
    final class Remote: Sendable {
        private let process: Process
        private let input: Pipe

        /// Starts the child with `count` subscriptions to `url`; returns once every one is caught up.
        init(count: Int, url: String) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            var environment = ProcessInfo.processInfo.environment
            environment["BENCH_BLIP_CLIENTS"] = "\(count) \(url)"
            process.environment = environment
            let output = Pipe()
            input = Pipe()
            process.standardOutput = output
            process.standardInput = input
            try process.run()
            var received = Data()
            while !received.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw ChangesBenchmark.Failure("the BLIP clients ended before they were ready") }
                received.append(chunk)
            }
        }

        /// Ends the child.
        func close() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}
