import AsyncHTTPClient
import CouchetteCore
import CouchetteTestSupport
import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import CouchetteGateway

// MARK: - Detached feeds

extension ChangesTests {
    /// Continuous feeds asked for by a connection's first request, served without the connection's task
    /// (``ContinuousFeedDetacher``), over raw sockets: the same lines as a streamed feed, `Connection: close`, and
    /// every way such a feed ends. A feed asked for later on a kept-alive connection streams as before.
    @Suite("_changes continuous feeds without a connection task", .timeLimit(.minutes(5)))
    struct Detached {
        /// `GET path` as a connection's request, with Basic credentials when given.
        static func request(_ path: String, user: (String, String)? = nil) -> String {
            let authorization = user.map { name, password in
                "Authorization: Basic \(Data("\(name):\(password)".utf8).base64EncodedString())\r\n"
            }
            return "GET \(path) HTTP/1.1\r\nHost: x\r\n\(authorization ?? "")\r\n"
        }

        /// The response head's header lines, lowercased.
        static func headerLines(_ reply: RawConnection.Reply) -> [String] {
            let head = reply.text.components(separatedBy: "\r\n\r\n").first ?? ""
            return head.components(separatedBy: "\r\n").dropFirst().map { $0.lowercased() }
        }

        @Test("A first request's continuous feed: entries, heartbeats, new writes as lines, then its end and a close")
        func firstRequestFeed() async throws {
            try await StreamingGateway.run { server, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "a", [:])
                let notifier = try await StreamingGateway.database(server).changeNotifier
                let connection = try RawConnection(port: ports.adminPort)
                try connection.send(Self.request("/todo/_changes?feed=continuous&heartbeat=50&limit=3"))
                // The entry there is, then heartbeats: the feed caught up and waits on the notifier.
                let opened = await connection.read(within: .seconds(30)) { bytes in
                    let text = String(decoding: bytes, as: UTF8.self)
                    return text.contains(#""id":"a""#) && text.components(separatedBy: "\r\n1\r\n\n\r\n").count > 2
                }
                #expect(opened.status == 200, "\(opened.text.prefix(300))")
                let headers = Self.headerLines(opened)
                #expect(headers.contains("connection: close"))
                #expect(headers.contains("transfer-encoding: chunked"))
                #expect(headers.contains("content-type: application/octet-stream"))
                #expect(headers.contains("cache-control: private, max-age=0, no-cache, no-store"))
                #expect(headers.contains { $0.hasPrefix("server: ") } && headers.contains { $0.hasPrefix("date: ") })
                #expect(!headers.contains { $0.hasPrefix("content-length") })
                #expect(try await BLIPPullTests.waitUntil { notifier.waiterCount == 1 })

                // New writes arrive as lines; the third entry reaches the limit: the body ends, the connection closes.
                try await ChangesTests.put(client, port: ports.adminPort, "b", [:])
                try await ChangesTests.put(client, port: ports.adminPort, "c", [:])
                let rest = await connection.readUntilClosed(within: .seconds(30))
                #expect(rest.closed)
                #expect(rest.text.contains(#""id":"b""#) && rest.text.contains(#""id":"c""#), "\(rest.text)")
                #expect(rest.text.hasSuffix("0\r\n\r\n"))
                #expect(notifier.waiterCount == 0)
            }
        }

        @Test("A client leaving a detached feed ends it: its registration with the notifier goes")
        func clientLeaves() async throws {
            try await StreamingGateway.run { server, client, ports in
                let notifier = try await StreamingGateway.database(server).changeNotifier
                do {
                    let connection = try RawConnection(port: ports.adminPort)
                    try connection.send(Self.request("/todo/_changes?feed=continuous"))
                    let opened = await connection.read(within: .seconds(30)) { $0.count > 20 }
                    #expect(opened.status == 200)
                    #expect(try await BLIPPullTests.waitUntil { notifier.waiterCount == 1 })
                }
                // The connection was closed by its deinit.
                #expect(try await BLIPPullTests.waitUntil { notifier.waiterCount == 0 })
                // The server goes on.
                #expect(try await client.send(port: ports.adminPort, path: "/todo/").status == 200)
            }
        }

        @Test("A user's detached feed sends their channels only; without credentials it is a 401 and a close")
        func publicPort() async throws {
            try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "mine", ["channels": ["a"]])
                try await ChangesTests.put(client, port: ports.adminPort, "theirs", ["channels": ["b"]])
                try await ChangesTests.put(client, port: ports.adminPort, "also-mine", ["channels": ["a"]])

                let alice = try RawConnection(port: ports.publicPort)
                try alice.send(Self.request("/todo/_changes?feed=continuous&limit=2", user: ("alice", "pass")))
                let feed = await alice.readUntilClosed(within: .seconds(30))
                #expect(feed.status == 200 && feed.closed)
                #expect(feed.text.contains(#""id":"mine""#) && feed.text.contains(#""id":"also-mine""#))
                #expect(!feed.text.contains("theirs"))

                let anonymous = try RawConnection(port: ports.publicPort)
                try anonymous.send(Self.request("/todo/_changes?feed=continuous"))
                let refused = await anonymous.readUntilClosed(within: .seconds(30))
                #expect(refused.status == 401 && refused.closed, "\(refused.text)")
                #expect(Self.headerLines(refused).contains { $0.hasPrefix("www-authenticate: basic") })
                #expect(refused.text.hasSuffix(#""reason":"Login required"}"#), "\(refused.text)")
            }
        }

        @Test("A feed asked for after another request on a kept-alive connection streams as before")
        func laterRequestStreams() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "a", [:])
                let connection = try RawConnection(port: ports.adminPort)
                try connection.send(Self.request("/todo/"))
                let first = await connection.read(within: .seconds(30)) { $0.last == UInt8(ascii: "}") }
                #expect(first.status == 200)
                #expect(!Self.headerLines(first).contains("connection: close"))
                try connection.send(Self.request("/todo/_changes?feed=continuous&limit=1"))
                let lastChunk = Array("0\r\n\r\n".utf8)
                let feed = await connection.read(within: .seconds(30)) { Array($0.suffix(5)) == lastChunk }
                #expect(feed.status == 200 && !feed.closed)
                #expect(!Self.headerLines(feed).contains("connection: close"))
                #expect(feed.text.contains(#""id":"a""#))
            }
        }

        @Test("Graceful shutdown ends a detached feed that has no heartbeat and no timeout")
        func shutdownEndsDetachedFeed() async throws {
            try await StreamingGateway.run { server, _, ports in
                let notifier = try await StreamingGateway.database(server).changeNotifier
                let connection = try RawConnection(port: ports.adminPort)
                try connection.send(Self.request("/todo/_changes?feed=continuous&timeout=0"))
                let opened = await connection.read(within: .seconds(30)) { $0.count > 20 }
                #expect(opened.status == 200 && Self.headerLines(opened).contains("connection: close"))
                #expect(try await BLIPPullTests.waitUntil { notifier.waiterCount == 1 })
                await server.triggerGracefulShutdown()
                let rest = await connection.readUntilClosed(within: .seconds(30))
                #expect(rest.closed && rest.text.hasSuffix("0\r\n\r\n"), "\(rest.text)")
                // StreamingGateway then checks that `run` returns, within the deadline.
            }
        }

        /// Whether the long runs of `make soak` are on (`COUCHETTE_SOAK=1`).
        static let soaking = ProcessInfo.processInfo.environment["COUCHETTE_SOAK"] != nil

        /// A client with a 4 KB window makes the 4 MB answer crawl for tens of seconds on a loaded machine (41 s in
        /// one CI run, where it made the idle-timeout tests beside it time out), so it runs in `make soak` only;
        /// smaller answers or larger windows no longer showed the cut it guards against (a close right after queueing
        /// the end dropped what NIO still held).
        @Test(
            "A detached answer larger than the socket takes arrives whole before the connection closes",
            .enabled(if: soaking, "a long transfer: make soak"))
        func largeAnswerArrivesWhole() async throws {
            try await StreamingGateway.run { _, client, ports in
                // ~4 MB of entries with their documents: more than loopback's socket buffers hold at once.
                let padding = String(repeating: "x", count: 2_000)
                for batch in 0..<4 {
                    let docs = (0..<500).map { index in
                        JSONValue.object(["_id": .string("doc\(batch)-\(index)"), "padding": .string(padding)])
                    }
                    let reply = try await client.send(
                        "POST", port: ports.adminPort, path: "/todo/_bulk_docs", json: ["docs": .array(docs)])
                    #expect(reply.status == 201)
                }
                // A later `feed` wins: the detached request gets a normal feed, written whole, then the close. The
                // client's small window keeps most of it queued in the server when the close comes.
                let connection = try RawConnection(port: ports.adminPort, receiveBuffer: 4_096)
                try connection.send(Self.request("/todo/_changes?feed=continuous&include_docs=true&feed=normal"))
                let reply = await connection.readUntilClosed(within: .seconds(120))
                #expect(reply.status == 200 && reply.closed)
                let parts = reply.text.components(separatedBy: "\r\n\r\n")
                let length = Self.headerLines(reply).first { $0.hasPrefix("content-length: ") }?.dropFirst(16)
                #expect(parts.count == 2 && length.flatMap { Int($0) } == parts.last?.utf8.count)
                #expect(reply.bytes.count > 4_000_000)
                #expect(reply.text.hasSuffix("\"last_seq\":\"2000\"}"), "\(reply.text.suffix(200))")
            }
        }

        @Test("Requests pipelined behind a detached feed are dropped: an upgrade among them changes nothing")
        func pipelinedRequestsAreDropped() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "a", [:])
                let connection = try RawConnection(port: ports.adminPort)
                let upgrade = "GET /todo/_blipsync HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n"
                try connection.send(
                    Self.request("/todo/_changes?feed=continuous&limit=2") + upgrade + Self.request("/todo/"))
                let opened = await connection.read(within: .seconds(30)) { bytes in
                    String(decoding: bytes, as: UTF8.self).contains(#""id":"a""#)
                }
                #expect(opened.status == 200)
                try await ChangesTests.put(client, port: ports.adminPort, "b", [:])
                let rest = await connection.readUntilClosed(within: .seconds(30))
                #expect(rest.closed && rest.text.hasSuffix("0\r\n\r\n"), "\(rest.text)")
                let all = opened.text + rest.text
                #expect(all.components(separatedBy: "HTTP/1.1").count == 2, "\(all)")
                #expect(rest.text.contains(#""id":"b""#))
            }
        }

        @Test("The admin port's credentials guard a detached feed as any request: 401 without them, the feed with them")
        func adminCredentials() async throws {
            var config = GatewayFixture.config()
            config.adminCredentials = BasicCredentials(username: "admin", password: "letmein")
            try await StreamingGateway.run(config) { _, _, ports in
                let anonymous = try RawConnection(port: ports.adminPort)
                try anonymous.send(Self.request("/todo/_changes?feed=continuous"))
                let refused = await anonymous.readUntilClosed(within: .seconds(30))
                #expect(refused.status == 401 && refused.closed, "\(refused.text)")
                #expect(!refused.text.contains("\"results\"") && !refused.text.contains("\"seq\""))

                let admin = try RawConnection(port: ports.adminPort)
                try admin.send(Self.request("/todo/_changes?feed=continuous&timeout=100", user: ("admin", "letmein")))
                let feed = await admin.readUntilClosed(within: .seconds(30))
                #expect(feed.status == 200 && feed.closed, "\(feed.text)")
                #expect(Self.headerLines(feed).contains("connection: close"))
            }
        }

        @Test("Over HTTPS (SSLCert/SSLKey) a first request's continuous feed is detached below TLS as over plain HTTP")
        func overTLS() async throws {
            try await TestCertificates.selfSigned().withHTTPSConfig { config in
                try await StreamingGateway.run(config) { _, client, ports in
                    try await ChangesTests.put(client, port: ports.adminPort, "a", ["channels": ["x"]])
                    var tls = TLSConfiguration.makeClientConfiguration()
                    tls.certificateVerification = .none
                    let https = HTTPClient(
                        eventLoopGroupProvider: .singleton,
                        configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                    let url = "https://127.0.0.1:\(ports.publicPort)/todo/_changes?feed=continuous&limit=1"
                    let answer: Result<(HTTPClientResponse, String), any Error>
                    do {
                        let response = try await https.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                        answer = .success((response, String(buffer: try await response.body.collect(upTo: 1 << 20))))
                    } catch {
                        answer = .failure(error)
                    }
                    try await https.shutdown()  // also when the request failed
                    let (response, body) = try answer.get()
                    #expect(response.status == .ok)
                    #expect(response.headers.first(name: "Connection")?.lowercased() == "close")
                    #expect(body.contains(#""id":"a""#), "\(body)")
                }
            }
        }
    }
}
