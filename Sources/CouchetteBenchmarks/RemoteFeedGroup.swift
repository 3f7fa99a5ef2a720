import AsyncHTTPClient
import CouchetteCore
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Continuous feeds whose client side runs in a child process (this executable with `BENCH_FEED_CLIENT` set), so
/// that 10,000 feeds fit in each process's file limit (here they would need 20,000 sockets: both ends). The child
/// prints `ready` once every feed has its answer's head, then `arrived <id> <ns>…` when a line has reached every
/// feed, with each feed's arrival time on the monotonic clock both processes share.
final class RemoteFeedGroup: @unchecked Sendable {
    private let process = Process()
    private let lines: AsyncStream<String>
    private var iterator: AsyncStream<String>.Iterator

    /// Starts the child with `count` feeds on `database` at the admin `port`, from sequence `since`.
    init(port: Int, database: String, count: Int, since: UInt64) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var environment = ProcessInfo.processInfo.environment
        environment["BENCH_FEED_CLIENT"] = "\(port):\(database):\(count):\(since)"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        // The child ends when this process does: its standard input closes then.
        process.standardInput = Pipe()
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        iterator = lines.makeAsyncIterator()
        let handle = output.fileHandleForReading
        Thread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
        }.start()
        try process.run()
    }

    /// The child's next line.
    func nextLine() async throws -> String {
        guard let line = await iterator.next() else { throw ChangesBenchmark.Failure("the feed client ended") }
        return line
    }

    /// The child's resident memory, in kB.
    var residentKilobytes: Int { ChangesBenchmark.residentKilobytes(of: String(process.processIdentifier)) }

    /// Writes `writes` documents one after another through `client`, each once every feed got the previous one,
    /// and returns each line's delay after its write's response, in milliseconds.
    func measure(writes: Int, client: HTTPClient, port: Int, database: String) async throws -> [Double] {
        var delays: [Double] = []
        for index in 0..<writes {
            let id = "\(database)-\(index)-\(UUID().uuidString.prefix(8))"
            try await ChangesBenchmark.put(client, port: port, database: database, id: id)
            let written = Self.monotonicNanoseconds()
            var line = try await nextLine()
            while !line.hasPrefix("arrived \(id) ") { line = try await nextLine() }
            for field in line.split(separator: " ").dropFirst(2) {
                guard let arrival = UInt64(field) else { continue }
                delays.append(arrival > written ? Double(arrival - written) / 1e6 : 0)
            }
        }
        return delays
    }

    /// Ends the child.
    func close() {
        process.terminate()
        process.waitUntilExit()
    }

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    // MARK: - The child

    /// Runs the child's side when `BENCH_FEED_CLIENT` is `port:database:count:since`; never returns then.
    static func runClientIfAsked() async throws {
        guard let spec = ProcessInfo.processInfo.environment["BENCH_FEED_CLIENT"] else { return }
        let parts = spec.split(separator: ":").map(String.init)
        guard parts.count == 4, let port = Int(parts[0]), let count = Int(parts[2]), let since = UInt64(parts[3]) else {
            exit(2)
        }
        let database = parts[1]
        Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) > 0 {}
            exit(0)  // the parent is gone
        }.start()
        _ = ChangesBenchmark.raiseFileLimit(to: count * 2)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(3_600), concurrentHTTP1ConnectionsPerHostSoftLimit: count + 100)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let printer = ArrivalPrinter(expected: count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    // 10,000 connections at once can overflow the listener's backlog: a feed that could not
                    // open tries again; one that fails later ends the child, which the parent then reports.
                    var isOpen = false
                    for attempt in 1...5 {
                        do {
                            try await ChangesBenchmark.follow(
                                client, port: port, database: database, since: since,
                                opened: {
                                    isOpen = true
                                    await printer.opened()
                                }
                            ) { id in await printer.record(id, at: monotonicNanoseconds()) }
                            return
                        } catch where !isOpen && attempt < 5 {
                            continue
                        } catch {
                            FileHandle.standardError.write(Data("feed client: \(error)\n".utf8))
                            exit(1)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        exit(0)
    }

    /// Prints `ready` when every feed opened and `arrived …` when a line reached every feed.
    actor ArrivalPrinter {
        let expected: Int
        private var openedCount = 0
        private var times: [String: [UInt64]] = [:]

        init(expected: Int) { self.expected = expected }

        func opened() {
            openedCount += 1
            if openedCount == expected { writeLine("ready") }
        }

        func record(_ id: String, at time: UInt64) {
            times[id, default: []].append(time)
            if times[id]!.count >= expected {
                writeLine("arrived \(id) " + times.removeValue(forKey: id)!.map(String.init).joined(separator: " "))
            }
        }

        private func writeLine(_ text: String) {
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }
}
