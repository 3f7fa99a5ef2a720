import AsyncHTTPClient
import CouchetteCore
import CouchetteGateway
import CouchetteTestSupport
import Foundation
import NIOCore
import NIOHTTP1

/// `make bench-scale` (issue 50): the gateway's requests on a `walrus:DIR` database of 1,000,000 Todo-like documents
/// (~200 bytes, in 1,000 channels, routed by the default sync function) against the same requests on one of 10,000,
/// in the same run. Each figure should not grow with the database.
///
/// The databases are built once, through `_bulk_docs`, in a folder kept between runs (`BENCH_SCALE_DIR`, by default
/// `.build/bench-scale`), and the time that took is printed. `BENCH_SCALE_DOCUMENTS` sets the large size.
///
/// - `scale.alldocs.p50.admin`, `scale.alldocs.p50.user`: p50 of `_all_docs?limit=100&startkey=…` at a random key,
///   as the admin and as a user with 10 of the 1,000 channels, on the large database ÷ on the small one (goal ≤ 2).
/// - `scale.compact.get-p99-ms`: p99 of `GET /{db}/{id}` while `_compact` runs on the large database (goal ≤ 50).
/// - The Lite side's figures (``measureLite(pullingFrom:)``).
/// - `scale.memory.after-requests`: the anonymous resident memory of a gateway process (this executable, started
///   again with `BENCH_SCALE_MEMORY`) after 100 `_all_docs` pages and 100 `_changes` pages of the large database
///   ÷ after its start (goal ≤ 1.5).
struct ScaleBenchmark {
    let small = 10_000
    /// A size between, for the pull's memory: whether it still grows past what fits the caches.
    let middle = 100_000
    let large: Int
    let folder: String
    static let channelCount = 1_000
    static let userChannels = (0..<10).map { "c\($0)" }
    static let user = (name: "reader", password: "scale-reader-password")
    static let batchSize = 1_000

    init() {
        let environment = ProcessInfo.processInfo.environment
        large = environment["BENCH_SCALE_DOCUMENTS"].flatMap(Int.init) ?? 1_000_000
        folder = environment["BENCH_SCALE_DIR"]
            ?? FileManager.default.currentDirectoryPath + "/.build/bench-scale"
    }

    /// The database of `count` documents.
    static func name(_ count: Int) -> String { "scale\(count)" }

    /// The ID of document `index`, zero-padded so that IDs sort as indexes do.
    static func id(_ index: Int) -> String { "doc" + String(repeating: "0", count: max(0, 7 - String(index).count)) + "\(index)" }

    /// A gateway serving the databases of `sizes` from `folder`.
    static func config(folder: String, sizes: [Int]) -> GatewayConfig {
        config(sizes.map { ($0, StorageLocation.directory(folder + "/\($0)")) })
    }

    /// A gateway serving the database of each size at its location.
    static func config(_ locations: [(count: Int, location: StorageLocation)]) -> GatewayConfig {
        let user = UserConfig(name: Self.user.name, password: Self.user.password, adminChannels: userChannels)
        return Benchmark.loopbackGateway(
            locations.map { count, location in
                DatabaseConfig(name: name(count), server: location, users: [Self.user.name: user])
            })
    }

    func run() async throws {
        print("# scale: \(small) and \(large) documents in \(Self.channelCount) channels, in \(folder)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sizes = Array(Set([small, min(middle, large), large])).sorted()
        try await measure(Self.config(folder: folder, sizes: sizes), figures: "scale", keptIn: folder) { admin in
            try await measureLite(pullingFrom: admin)
        }

        if ProcessInfo.processInfo.environment["BENCH_SCALE_POSTGRES"] != "0" {
            // PostgreSQL: the tests' private server, its databases built again on each run.
            let postgres = try PostgresServer.shared()
            defer { postgres.stop() }
            let locations = try [small, large].map { count in
                (count, try StorageLocation(parsing: try postgres.createDatabase()))
            }
            print("# scale.postgres: the same on PostgreSQL (private server, loopback)")
            try await measure(Self.config(locations), figures: "scale.postgres", keptIn: nil)
        }

        let (start, after) = try Self.memoryInChild(folder: folder, count: large)
        print("# scale.memory: \(Benchmark.format(start)) MB after start, \(Benchmark.format(after)) MB after the requests")
        Self.reportAtMost("scale.memory.after-requests", after / start, goal: 1.5)
    }

    /// Builds the databases of `config` (unless built in `folder` before) and reports the `_all_docs` and compaction
    /// figures, named after `figures`; then runs `afterwards` with the gateway's admin URL.
    private func measure(
        _ config: GatewayConfig, figures: String, keptIn folder: String?,
        afterwards: ((String) async throws -> Void)? = nil
    ) async throws {
        let sizes = config.databases.keys.compactMap { Int($0.dropFirst("scale".count)) }.sorted()
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let admin = "http://127.0.0.1:\(ports.adminPort)"
        let public_ = "http://127.0.0.1:\(ports.publicPort)"
        do {
            for count in sizes { try await build(count, http: http, admin: admin, keptIn: folder) }

            let adminP50 = try await allDocsP50(sizes, http: http, base: admin, asUser: false)
            let userP50 = try await allDocsP50(sizes, http: http, base: public_, asUser: true)
            for count in sizes {
                print(
                    "# scale \(count): _all_docs p50 admin \(Benchmark.format(adminP50[count]! * 1000)) ms, user \(Benchmark.format(userP50[count]! * 1000)) ms"
                )
            }
            Self.reportAtMost("\(figures).alldocs.p50.admin", adminP50[large]! / adminP50[small]!, goal: 2)
            Self.reportAtMost("\(figures).alldocs.p50.user", userP50[large]! / userP50[small]!, goal: 2)

            let getP99 = try await getP99DuringCompaction(large, http: http, base: admin)
            Self.reportAtMost("\(figures).compact.get-p99-ms", getP99 * 1000, goal: 50)
            try await afterwards?(admin)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// Prints a figure whose goal is an upper bound.
    static func reportAtMost(_ figure: String, _ value: Double, goal: Double) {
        print("BENCH \(figure) \(Benchmark.format(value)) <=\(Benchmark.format(goal))")
    }

    // MARK: - Building

    /// Writes the database of `count` documents unless an earlier run did (in `folder`, when kept).
    private func build(_ count: Int, http: HTTPClient, admin: String, keptIn folder: String?) async throws {
        let marker = folder.map { $0 + "/\(count).built" }
        if let marker, FileManager.default.fileExists(atPath: marker) { return }
        let name = Self.name(count)
        let start = ContinuousClock.now
        let clients = 4
        let batches = (count + Self.batchSize - 1) / Self.batchSize
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    for batch in stride(from: client, to: batches, by: clients) {
                        let range = (batch * Self.batchSize)..<min((batch + 1) * Self.batchSize, count)
                        let docs = range.map { Self.document($0) }
                        let body = ByteBuffer(bytes: JSONValue.object(["docs": .array(docs)]).serialized())
                        _ = try await Self.send(http, "POST", "\(admin)/\(name)/_bulk_docs", body: body, expecting: 201)
                    }
                }
            }
            try await group.waitForAll()
        }
        if let marker { FileManager.default.createFile(atPath: marker, contents: Data()) }
        print("# scale: built \(count) documents in \(Benchmark.format(Benchmark.seconds(since: start))) s")
    }

    /// Document `index`: a Todo-like task of ~200 bytes in channel `c<index % 1000>`.
    static func document(_ index: Int) -> JSONValue {
        [
            "_id": .string(id(index)), "type": "task", "title": .string("Task \(index): buy milk, eggs and bread"),
            "complete": .bool(index % 3 == 0), "priority": .int(Int64(index % 5)),
            "taskList": ["id": .string("list\(index % 5_000)"), "owner": .string("user\(index % 200)")],
            "createdAt": "2026-12-07T17:00:00Z", "channels": [.string("c\(index % channelCount)")],
        ]
    }

    // MARK: - Measuring

    /// The p50, in seconds, of 100 `_all_docs?limit=100` pages at random start keys (after 10 not counted) on the
    /// database of each size, the sizes taking turns so that the machine's drift falls on each alike.
    private func allDocsP50(_ counts: [Int], http: HTTPClient, base: String, asUser: Bool) async throws -> [Int: Double] {
        var random = SystemRandomNumberGenerator()
        var times: [Int: [Double]] = [:]
        for round in 0..<110 {
            for count in counts {
                let key = Self.id(Int.random(in: 0..<count, using: &random))
                let url = "\(base)/\(Self.name(count))/_all_docs?limit=100&startkey=%22\(key)%22"
                let start = ContinuousClock.now
                _ = try await Self.send(http, "GET", url, expecting: 200, asUser: asUser)
                if round >= 10 { times[count, default: []].append(Benchmark.seconds(since: start)) }
            }
        }
        return times.mapValues { $0.sorted()[$0.count / 2] }
    }

    /// The p99, in seconds, of `GET`s of random documents, 2 at a time, while `_compact` runs on the database.
    private func getP99DuringCompaction(_ count: Int, http: HTTPClient, base: String) async throws -> Double {
        let name = Self.name(count)
        let compacting = ManagedAtomicFlag()
        let compaction = Task {
            defer { compacting.set() }
            let start = ContinuousClock.now
            _ = try await Self.send(http, "POST", "\(base)/\(name)/_compact", expecting: 200)
            return Benchmark.seconds(since: start)
        }
        let times = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var times: [Double] = []
                    var random = SystemRandomNumberGenerator()
                    repeat {
                        let url = "\(base)/\(name)/\(Self.id(Int.random(in: 0..<count, using: &random)))"
                        let start = ContinuousClock.now
                        _ = try await Self.send(http, "GET", url, expecting: 200)
                        times.append(Benchmark.seconds(since: start))
                    } while !compacting.isSet
                    return times
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted()
        }
        let seconds = try await compaction.value
        print(
            "# scale.compact: _compact of \(count) documents took \(Benchmark.format(seconds)) s; \(times.count) GETs, p50 \(Benchmark.format(times[times.count / 2] * 1000)) ms"
        )
        return times[min(times.count - 1, times.count * 99 / 100)]
    }

    // MARK: - Memory, in a process of its own

    /// Runs this executable again as a gateway on the database of `count` documents, which measures its memory
    /// after starting and after the requests, and returns both in MB.
    static func memoryInChild(folder: String, count: Int) throws -> (start: Double, after: Double) {
        let figures = try inChild(["BENCH_SCALE_MEMORY": "\(folder):\(count)"], answer: "memory", count: 2)
        return (figures[0], figures[1])
    }

    /// Runs this executable again with `variables` set, and returns the `count` numbers after the last word
    /// `answer` it printed.
    static func inChild(_ variables: [String: String], answer: String, count: Int) throws -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let words = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard let index = words.lastIndex(of: Substring(answer)), words.count > index + count else {
            throw ChangesBenchmark.Failure("the child printed no \(answer)")
        }
        let figures = words[(index + 1)...(index + count)].compactMap { Double($0) }
        guard figures.count == count else { throw ChangesBenchmark.Failure("the child's \(answer) is not numbers") }
        return figures
    }

    /// The child side of ``memoryInChild(folder:count:)``: prints `memory <MB after start> <MB after requests>`.
    static func runMemoryChildIfAsked() async throws {
        guard let spec = ProcessInfo.processInfo.environment["BENCH_SCALE_MEMORY"],
            let colon = spec.lastIndex(of: ":"), let count = Int(spec[spec.index(after: colon)...])
        else { return }
        let folder = String(spec[..<colon])
        let server = try GatewayServer(config: config(folder: folder, sizes: [count]), logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let base = "http://127.0.0.1:\(ports.adminPort)/\(name(count))"
        // One request of each kind first: what serving any request allocates once (buffers, caches) is the start.
        _ = try await send(http, "GET", "\(base)/_all_docs?limit=1", expecting: 200)
        _ = try await send(http, "GET", "\(base)/_changes?limit=1", expecting: 200)
        let start = PeakMemory.anonymousMegabytes() ?? 0
        var random = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let key = id(Int.random(in: 0..<count, using: &random))
            _ = try await send(
                http, "GET", "\(base)/_all_docs?limit=100&include_docs=true&startkey=%22\(key)%22", expecting: 200)
            let since = Int.random(in: 0..<count, using: &random)
            _ = try await send(http, "GET", "\(base)/_changes?limit=1000&since=\(since)", expecting: 200)
        }
        let after = PeakMemory.anonymousMegabytes() ?? 0
        try await http.shutdown()
        await server.triggerGracefulShutdown()
        try await serverTask.value
        print("memory \(start) \(after)")
        exit(0)
    }

    // MARK: - HTTP

    @discardableResult
    static func send(
        _ http: HTTPClient, _ method: String, _ url: String, body: ByteBuffer? = nil, expecting status: UInt,
        asUser: Bool = false
    ) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        if asUser {
            let credentials = Data("\(user.name):\(user.password)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        }
        let response = try await http.execute(request, timeout: .seconds(600))
        let bytes = try await response.body.collect(upTo: 256 << 20)
        guard response.status.code == status else {
            throw GatewayError(
                statusCode: Int(response.status.code),
                reason: "benchmark request failed: \(method) \(url): \(String(buffer: bytes).prefix(200))")
        }
        return bytes
    }
}
