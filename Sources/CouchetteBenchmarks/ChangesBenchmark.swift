import AsyncHTTPClient
import CouchetteCore
import CouchetteGateway
import Foundation
import Logging
import NIOCore

/// `_changes` fan-out against a gateway in this process: continuous feeds on the admin port, a write at a time,
/// timing how long each write's line takes to reach every feed after the write's HTTP response arrived.
///
/// Prints `changes.p50-ms` and `changes.p99-ms` (goal ≤ 10 ms) with 100 feeds, `changes.p99-ms.1000` with 1,000,
/// and `changes.feed-kb`: memory per idle feed, client and server side together (both run here), before and after
/// opening 1,000 feeds; then `changes.p99-ms.10000` (goal ≤ 25 ms, 100 writes) and `changes.feed-kb.10000` (goal ≤ 16,
/// the server's memory per feed) with 10,000 feeds whose client side runs in a child process (``RemoteFeedGroup``),
/// each process's file limit raised; before them, `changes.idle-connection-kb`, the server's memory per keep-alive
/// connection left idle after one `GET /` (what any open connection costs, for comparison). Memory is the allocator's bytes in use (glibc's `malloc_info`), not the resident
/// set: how much the resident set grows depends on how much memory earlier phases freed for the feeds to reuse (the
/// same feeds measured 10–43 kB that way), while what the feeds hold does not. Feeds ask for a 300 s heartbeat, as
/// Couchbase Lite does.
struct ChangesBenchmark {
    /// Writes timed with 100 feeds.
    var writesSmall = 200
    /// Writes timed with 1,000 feeds.
    var writesLarge = 40
    /// Writes timed with 10,000 feeds.
    var writesHuge = 100

    /// Starts a gateway on free ports, opens the feeds, times the writes and prints the figures.
    func run() async throws {
        let hugeFeeds = 10_000
        _ = Self.raiseFileLimit(to: hugeFeeds + 5_000)
        let config = Benchmark.loopbackGateway([
            DatabaseConfig(name: "small"), DatabaseConfig(name: "large"), DatabaseConfig(name: "huge"),
        ])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let port = try await server.waitUntilReady().adminPort

        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: 12_000)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)

        // Warm up the write path and the connection pool.
        for index in 0..<20 { try await Self.put(client, port: port, database: "small", id: "warm\(index)") }

        let large = try Self.require(await server.registry.database(named: "large"))
        let small = try Self.require(await server.registry.database(named: "small"))

        let inUseBeforeLarge = Self.inUseKilobytes()
        let largeFeeds = FeedGroup(client: client, port: port, database: "large")
        try await largeFeeds.open(count: 1_000, notifier: large.changeNotifier)
        let perFeed = Double(Self.inUseKilobytes() - inUseBeforeLarge) / 1_000

        let smallFeeds = FeedGroup(client: client, port: port, database: "small")
        try await smallFeeds.open(count: 100, notifier: small.changeNotifier)
        let smallDelays = try await smallFeeds.measure(writes: writesSmall)
        let largeDelays = try await largeFeeds.measure(writes: writesLarge)

        print("# changes: \(writesSmall) writes × 100 feeds, \(writesLarge) writes × 1,000 feeds")
        print("BENCH changes.p50-ms \(Benchmark.format(Self.percentile(smallDelays, 0.50))) -")
        print("BENCH changes.p99-ms \(Benchmark.format(Self.percentile(smallDelays, 0.99))) <=10")
        print("BENCH changes.p99-ms.1000 \(Benchmark.format(Self.percentile(largeDelays, 0.99))) -")
        print("BENCH changes.feed-kb \(Benchmark.format(perFeed)) -")

        // What any connection costs the server: keep-alive connections idle after one request.
        let idleBefore = Self.inUseKilobytes()
        let idle = try await IdleConnections.open(count: 5_000, port: port)
        let idleTotal = Self.inUseKilobytes() - idleBefore
        let idlePerConnection = Double(idleTotal) / 5_000
        idle.close()
        // The server frees them once it sees them closed: wait for that before measuring the feeds.
        let freedBy = ContinuousClock.now + .seconds(20)
        while Self.inUseKilobytes() > idleBefore + idleTotal / 20, ContinuousClock.now < freedBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        print("# changes: an idle keep-alive connection (one GET / answered) holds \(Benchmark.format(idlePerConnection)) kB of the server's heap")
        print("BENCH changes.idle-connection-kb \(Benchmark.format(idlePerConnection)) info")

        // 10,000 feeds, their client side in a child process (each feed is a socket at both ends).
        let huge = try Self.require(await server.registry.database(named: "huge"))
        let before = Self.residentKilobytes()
        let inUseBefore = Self.inUseKilobytes()
        let waitingBefore = huge.changeNotifier.waiterCount
        let remote = try RemoteFeedGroup(
            port: port, database: "huge", count: hugeFeeds, since: huge.changeNotifier.lastSequence)
        while try await remote.nextLine() != "ready" {}
        while huge.changeNotifier.waiterCount < waitingBefore + hugeFeeds { try await Task.sleep(for: .milliseconds(5)) }
        let residentPerFeed = Double(Self.residentKilobytes() - before) / Double(hugeFeeds)
        let inUsePerFeed = Double(Self.inUseKilobytes() - inUseBefore) / Double(hugeFeeds)
        let clientPerFeed = Double(remote.residentKilobytes) / Double(hugeFeeds)
        let hugeDelays = try await remote.measure(writes: writesHuge, client: client, port: port, database: "huge")
        remote.close()
        print("# changes: \(writesHuge) writes × \(hugeFeeds) feeds (client side in a child process: \(Benchmark.format(clientPerFeed)) kB per feed there)")
        print("BENCH changes.p99-ms.10000 \(Benchmark.format(Self.percentile(hugeDelays, 0.99))) <=25")
        print("# changes: resident memory per idle feed \(Benchmark.format(residentPerFeed)) kB (the heap reuses what earlier phases freed)")
        print("BENCH changes.feed-kb.10000 \(Benchmark.format(inUsePerFeed)) <=16")

        // Graceful shutdown ends the feeds; then the readers finish.
        await server.triggerGracefulShutdown()
        try await serverTask.value
        await smallFeeds.close()
        await largeFeeds.close()
        try await client.shutdown()
    }

    // MARK: - Helpers

    /// `PUT /{db}/{id}` with a small body.
    static func put(_ client: HTTPClient, port: Int, database: String, id: String) async throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/\(database)/\(id)")
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"type":"task","title":"benchmark write","channels":["bench"]}"#))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .created else { throw Failure("PUT \(id): \(response.status)") }
    }

    /// Opens a continuous feed (300 s heartbeat, as Couchbase Lite asks) and calls `arrived` with each line's
    /// document ID as the line arrives, until the feed ends; `opened` once the answer's head is in.
    static func follow(
        _ client: HTTPClient, port: Int, database: String, since: UInt64, opened: () async -> Void = {},
        arrived: (String) async -> Void
    ) async throws {
        let query = "feed=continuous&since=\(since)&heartbeat=300000"
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/\(database)/_changes?\(query)")
        request.method = .GET
        let response = try await client.execute(request, timeout: .seconds(3_600))
        await opened()
        var pending: [UInt8] = []
        for try await chunk in response.body {
            pending += chunk.readableBytesView
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                guard !line.isEmpty, let id = try? JSONValue(parsing: line)["id"]?.stringValue else { continue }
                await arrived(id)
            }
        }
    }

    /// The `p` quantile of durations, in milliseconds.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    /// Raises the process's open-file limit towards `wanted` (the hard limit too when allowed, e.g. as root);
    /// returns the soft limit now.
    static func raiseFileLimit(to wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_max < rlim_t(wanted) {
            var raised = limit
            raised.rlim_max = rlim_t(wanted)
            raised.rlim_cur = rlim_t(wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
        }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(limit.rlim_cur) : 0
    }

    /// The memory figure of the feed phases: the allocator's bytes in use, or the resident set where glibc's
    /// `malloc_info` is missing.
    static func inUseKilobytes() -> Int {
        heapKilobytes() ?? residentKilobytes()
    }

    /// Bytes the allocator has handed out and not had back (all arenas, mmapped blocks included), in kB, from glibc's
    /// `malloc_info` (its XML totals: the arenas' system memory less their free chunks, plus mmapped blocks); nil
    /// where it is not available.
    static func heapKilobytes() -> Int? {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_info") else { return nil }
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        let status = mallocInfo(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard status == 0, let buffer else { return nil }
        let xml = String(cString: buffer)
        // The process-wide totals follow the last arena's </heap>.
        guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] }) else { return nil }
        func bytes(of element: String) -> Int {
            guard let start = totals.range(of: element) else { return 0 }
            let rest = totals[start.upperBound...]
            guard let value = rest.range(of: "size=\"") else { return 0 }
            return Int(rest[value.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        let free = bytes(of: "<total type=\"fast\"") + bytes(of: "<total type=\"rest\"")
        return (bytes(of: "<system type=\"current\"") - free + bytes(of: "<total type=\"mmap\"")) / 1024
    }

    /// The resident set size of a process (this one by default) from `/proc/<pid>/statm`, in kB.
    static func residentKilobytes(of process: String = "self") -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/\(process)/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    private static func require<T>(_ value: T?) throws -> T {
        guard let value else { throw Failure("missing benchmark database") }
        return value
    }
}

extension ChangesBenchmark {
    /// A benchmark failure.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        let description: String

        /// Creates a failure.
        init(_ description: String) { self.description = description }
    }

    // MARK: - FeedGroup

    /// Continuous feeds on one database, each read by its own task, recording when each document's line arrives.
    final class FeedGroup: Sendable {
        /// The HTTP client the feeds and writes use.
        let client: HTTPClient
        /// The admin port.
        let port: Int
        /// The database the feeds follow.
        let database: String
        /// When each line reached each feed.
        let arrivals = Arrivals()
        private let readers = Readers()

        /// Creates a group of feeds on `database`, on the admin port `port`.
        init(client: HTTPClient, port: Int, database: String) {
            self.client = client
            self.port = port
            self.database = database
        }

        /// Opens `count` feeds from the current sequence and waits until every one of them waits on `notifier`.
        func open(count: Int, notifier: ChangeNotifier) async throws {
            let since = notifier.lastSequence
            let waitingBefore = notifier.waiterCount
            await arrivals.expect(await arrivals.expected + count)
            for _ in 0..<count {
                let task = Task { [client, port, database, arrivals] in
                    try await ChangesBenchmark.follow(client, port: port, database: database, since: since) { id in
                        await arrivals.record(id, at: .now)
                    }
                }
                await readers.add(task)
            }
            // Every feed has read what there was and sleeps on the notifier: the idle state being measured.
            while notifier.waiterCount < waitingBefore + count {
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        /// Writes `writes` documents one after another, each once every feed got the previous one, and returns each
        /// line's delay after its write's response, in milliseconds.
        func measure(writes: Int) async throws -> [Double] {
            var delays: [Double] = []
            for index in 0..<writes {
                let id = "\(database)-\(index)-\(UUID().uuidString.prefix(8))"
                try await ChangesBenchmark.put(client, port: port, database: database, id: id)
                let written = ContinuousClock.now
                for arrival in await arrivals.waitForAll(id) {
                    let delay = arrival - written
                    let milliseconds = Double(delay.components.seconds) * 1_000
                        + Double(delay.components.attoseconds) / 1e15
                    delays.append(max(milliseconds, 0))
                }
            }
            return delays
        }

        /// Cancels the readers and waits for them.
        func close() async {
            for task in await readers.all {
                task.cancel()
                _ = await task.result
            }
        }
    }

    // MARK: - Readers

    /// The reading tasks of a ``FeedGroup``.
    actor Readers {
        /// The tasks, in the order they started.
        private(set) var all: [Task<Void, any Error>] = []

        /// Adds a reading task.
        func add(_ task: Task<Void, any Error>) { all.append(task) }
    }

    // MARK: - Arrivals

    /// When each document's line arrived on each feed, and who waits for all feeds to have it.
    actor Arrivals {
        private(set) var expected = 0
        private var times: [String: [ContinuousClock.Instant]] = [:]
        private var waiters: [String: CheckedContinuation<[ContinuousClock.Instant], Never>] = [:]

        /// Sets how many feeds each line must reach.
        func expect(_ count: Int) { expected = count }

        /// Records a line's arrival on one feed.
        func record(_ id: String, at time: ContinuousClock.Instant) {
            times[id, default: []].append(time)
            if times[id]!.count >= expected, let waiter = waiters.removeValue(forKey: id) {
                waiter.resume(returning: times.removeValue(forKey: id) ?? [])
            }
        }

        /// Waits until the line of `id` reached every feed, and returns its arrival times.
        func waitForAll(_ id: String) async -> [ContinuousClock.Instant] {
            if let arrived = times[id], arrived.count >= expected {
                times[id] = nil
                return arrived
            }
            return await withCheckedContinuation { waiters[id] = $0 }
        }
    }
}
