import AsyncHTTPClient
import CouchetteCore
import CouchetteGateway
import Foundation
import NIOCore
import NIOHTTP1

/// Authentication under attack, over loopback HTTP:
///
/// - `auth.guessing-p50-ratio`: the median time of `GET /{db}/` as a signed-in user while 8 clients guess
///   passwords (wrong passwords for that user and for names that do not exist) ÷ the same without guessers
///   (goal ≤ 2). bcrypt runs at Sync Gateway's cost, 10.
/// - `auth.many-channels`: the median time of requests (`GET /{db}/`, `GET /{db}/{doc}` and an up-to-date
///   `_changes?limit=1`, the worst of the three ratios) as a user granted 40,000 channels by documents (the Todo moderator
///   model: one channel per list) ÷ as a user with none (goal ≤ 2); `.writing` the same beside a writer adding
///   lists, each a new grant to that user.
struct AuthBenchmark {
    let requests = 400
    let guessers = 8
    let channelCount = 40_000

    func run() async throws {
        try await guessing()
        try await manyChannels()
    }

    private func guessing() async throws {
        print("# auth: \(requests) requests as a signed-in user, alone and beside \(guessers) password guessers")
        let config = Benchmark.loopbackGateway([
            DatabaseConfig(name: "auth", users: ["alice": UserConfig(name: "alice", password: "letmein", adminChannels: ["a"])])
        ])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let url = "http://127.0.0.1:\(ports.publicPort)/auth/"

        _ = try await Self.timedGet(http, url, user: "alice", password: "letmein")  // verifies once, then cached
        let alone = try await medianOfRequests(http, url)

        // The guessers are other clients: their own connections (a shared pool would make the user wait for one).
        let guesserHTTP = HTTPClient(eventLoopGroupProvider: .singleton)
        let stop = ManagedAtomicFlag()
        let guessing = (0..<guessers).map { index in
            Task {
                var attempt = 0
                while !stop.isSet {
                    attempt += 1
                    let user = attempt % 2 == 0 ? "alice" : "nobody\(index)-\(attempt)"
                    _ = try? await Self.timedGet(guesserHTTP, url, user: user, password: "guess\(attempt)")
                }
            }
        }
        let beside = try await medianOfRequests(http, url)
        stop.set()
        for task in guessing { await task.value }
        try await guesserHTTP.shutdown()

        print("# auth: p50 alone \(Benchmark.format(alone * 1000)) ms, beside guessers \(Benchmark.format(beside * 1000)) ms")
        print("BENCH auth.guessing-p50-ratio \(Benchmark.format(beside / alone)) <=2")

        try await http.shutdown()
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    private func manyChannels() async throws {
        print("# auth: a user granted \(channelCount) channels by documents against a user with none")
        let sync = "function(doc, oldDoc) { channel(doc._id); if (doc.owner) { access(doc.owner, doc._id); } }"
        let config = Benchmark.loopbackGateway([
            DatabaseConfig(
                name: "lists", sync: sync,
                users: [
                    "moderator": UserConfig(name: "moderator", password: "pass"),
                    "newcomer": UserConfig(name: "newcomer", password: "pass"),
                ])
        ])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let admin = "http://127.0.0.1:\(ports.adminPort)/lists"
        for start in stride(from: 0, to: channelCount, by: 1_000) {
            let docs = (start..<start + 1_000).map { index in
                JSONValue.object(["_id": .string("list\(index)"), "owner": "moderator"])
            }
            try await Self.post(http, "\(admin)/_bulk_docs", JSONValue.object(["docs": .array(docs)]))
        }
        let publicURL = "http://127.0.0.1:\(ports.publicPort)/lists"
        let paths = ["/", "/list7", "/_changes?since=\(channelCount)&limit=1"]

        /// The median time of each path's requests as `user`.
        func medians(_ user: String) async throws -> [Double] {
            var medians: [Double] = []
            for path in paths {
                _ = try await Self.timedGet(http, publicURL + path, user: user, password: "pass")
                var times: [Double] = []
                for _ in 0..<(requests / paths.count) {
                    times.append(try await Self.timedGet(http, publicURL + path, user: user, password: "pass"))
                }
                medians.append(times.sorted()[times.count / 2])
            }
            return medians
        }
        func worstRatio(_ many: [Double], _ none: [Double]) -> Double {
            zip(many, none).map { $0 / $1 }.max() ?? 0
        }
        let many = try await medians("moderator")
        let none = try await medians("newcomer")

        // Beside a writer adding lists (each a new grant to the moderator).
        let stop = ManagedAtomicFlag()
        let writer = Task {
            var index = channelCount
            while !stop.isSet {
                let doc = JSONValue.object(["_id": .string("list\(index)"), "owner": "moderator"])
                try? await Self.post(http, "\(admin)/_bulk_docs", JSONValue.object(["docs": [doc]]))
                index += 1
            }
        }
        let manyLoaded = try await medians("moderator")
        let noneLoaded = try await medians("newcomer")
        stop.set()
        await writer.value

        func milliseconds(_ values: [Double]) -> String {
            values.map { Benchmark.format($0 * 1000) }.joined(separator: " / ")
        }
        print("# auth: p50 of \(paths.joined(separator: ", ")) in ms: idle \(milliseconds(many)) with \(channelCount) channels, \(milliseconds(none)) with none; beside a writer \(milliseconds(manyLoaded)) / \(milliseconds(noneLoaded))")
        print("BENCH auth.many-channels \(Benchmark.format(worstRatio(many, none))) <=2")
        print("BENCH auth.many-channels.writing \(Benchmark.format(worstRatio(manyLoaded, noneLoaded))) <=2")

        try await http.shutdown()
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    private static func post(_ http: HTTPClient, _ url: String, _ body: JSONValue) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        let response = try await http.execute(request, timeout: .seconds(120))
        _ = try await response.body.collect(upTo: 64 << 20)
        guard response.status.code < 300 else { throw GatewayError(statusCode: Int(response.status.code), reason: url) }
    }

    private func medianOfRequests(_ http: HTTPClient, _ url: String) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<requests {
            times.append(try await Self.timedGet(http, url, user: "alice", password: "letmein"))
        }
        return times.sorted()[times.count / 2]
    }

    /// One GET with Basic credentials; its duration in seconds.
    static func timedGet(_ http: HTTPClient, _ url: String, user: String, password: String) async throws -> Double {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        let start = ContinuousClock.now
        let response = try await http.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Benchmark.seconds(since: start)
    }
}

/// A flag set once, read from many tasks.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
