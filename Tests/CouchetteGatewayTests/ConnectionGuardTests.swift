import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ConnectionGuardTests

/// Hostile and careless clients, over raw sockets: malformed requests get an answer and a closed connection,
/// idle and slow connections cannot hold the server, shutdown is bounded, and body limits are uniform.
@Suite("Connections: malformed, idle and slow clients over raw sockets", .timeLimit(.minutes(5)))
struct ConnectionGuardTests {
    /// A malformed request and the status it must get.
    struct Malformed: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let status: Int
        var testDescription: String { name }
    }

    static let malformedRequests: [Malformed] = [
        Malformed(
            name: "an 80 KB URL", bytes: Array("GET /todo/\(String(repeating: "a", count: 80_000)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            status: 414),
        Malformed(
            name: "1,000 header lines",
            bytes: Array(("GET / HTTP/1.1\r\nHost: x\r\n" + (0..<1000).map { "X-H\($0): v\r\n" }.joined() + "\r\n").utf8),
            status: 431),
        Malformed(name: "a raw 0xFF byte in the path", bytes: Array("GET /todo/".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8), status: 400),
        Malformed(name: "a NUL in a header value", bytes: Array("GET / HTTP/1.1\r\nHost: x\r\nX-T: a\u{0}b\r\n\r\n".utf8), status: 400),
        Malformed(name: "Content-Length: -5", bytes: Array("PUT /todo/d HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8), status: 400),
        Malformed(name: "bytes that are not HTTP", bytes: [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x0D, 0x0A, 0x0D, 0x0A], status: 400),
    ]

    @Test("A malformed request gets its status and a closed connection; the server goes on serving", arguments: malformedRequests)
    func malformedRequest(_ request: Malformed) async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            for port in [ports.publicPort, ports.adminPort] {
                let connection = try RawConnection(port: port)
                try connection.send(request.bytes)
                let reply = await connection.readUntilClosed(within: .seconds(30))
                #expect(reply.status == request.status, "\(request.name) on port \(port): \(reply.text.prefix(200))")
                #expect(reply.closed, "\(request.name): the connection stayed open")
            }
            let welcome = try await client.send(port: ports.publicPort, path: "/")
            #expect(welcome.status == 200)
        }
    }

    @Test("A connection that sends nothing, or half a head, is closed after ServerIdleTimeout")
    func idleConnectionsClose() async throws {
        var config = GatewayFixture.config()
        config.connectionLimits.idleTimeout = .milliseconds(500)
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let silent = try RawConnection(port: ports.publicPort)
            let halfHead = try RawConnection(port: ports.publicPort)
            try halfHead.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            let keptAlive = try RawConnection(port: ports.publicPort)
            try keptAlive.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            for (name, connection) in [("silent", silent), ("half a head", halfHead), ("kept alive", keptAlive)] {
                let reply = await connection.readUntilClosed(within: .seconds(30))
                #expect(reply.closed, "\(name): still open after the idle timeout")
            }
            // The server still answers new connections.
            #expect(try await client.send(port: ports.publicPort, path: "/").status == 200)
        }
    }

    @Test("A body that does not arrive within ServerReadTimeout gets 408 and a close; nothing is stored")
    func slowBodyTimesOut() async throws {
        var config = GatewayFixture.config()
        config.connectionLimits.readTimeout = .milliseconds(500)
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let connection = try RawConnection(port: ports.publicPort)
            try connection.send(
                "PUT /todo/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"")
            let reply = await connection.readUntilClosed(within: .seconds(30))
            #expect(reply.status == 408, "\(reply.text)")
            #expect(reply.closed)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/slow").status == 404)
        }
    }

    @Test("A continuous feed sending heartbeats is not idle")
    func heartbeatsAreNotIdle() async throws {
        var config = GatewayFixture.config()
        config.connectionLimits.idleTimeout = .milliseconds(300)
        try await ChangesFeedSettings.$minimumHeartbeat.withValue(.milliseconds(50)) {
        try await GatewayFixture.withRunningGateway(config) { _, ports in
            let connection = try RawConnection(port: ports.publicPort)
            try connection.send("GET /todo/_changes?feed=continuous&heartbeat=50 HTTP/1.1\r\nHost: x\r\n\r\n")
            // 12 heartbeats (each a chunk holding "\n"), twice the idle timeout later, the feed is still open.
            let reply = await connection.read(within: .seconds(30)) { bytes in
                bytes.count(where: { $0 == UInt8(ascii: "\n") }) > 3 * 12 + 10
            }
            #expect(reply.status == 200, "\(reply.text.prefix(200))")
            #expect(!reply.closed, "the feed was closed while sending heartbeats")
        }
        }
    }

    @Test("Graceful shutdown completes within ServerShutdownTimeout while clients hold sockets")
    func shutdownIsBounded() async throws {
        var config = GatewayFixture.config()
        config.connectionLimits.shutdownTimeout = .seconds(2)
        let server = try GatewayServer(config: config, logger: GatewayFixture.logger)
        let task = Task { try await server.run() }
        let ports = try await withDeadline(.seconds(60), "the gateway starting") { try await server.waitUntilReady() }
        let silent = try RawConnection(port: ports.publicPort)
        let halfHead = try RawConnection(port: ports.publicPort)
        try halfHead.send("GET / HTTP/1.1\r\nHost: x\r\n")
        let halfBody = try RawConnection(port: ports.adminPort)
        try halfBody.send("PUT /todo/d HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
        let longpoll = try RawConnection(port: ports.publicPort)
        try longpoll.send("GET /todo/_changes?feed=longpoll&since=now&timeout=300000 HTTP/1.1\r\nHost: x\r\n\r\n")
        let started = ContinuousClock.now
        await server.triggerGracefulShutdown()
        _ = try? await withDeadline(.seconds(30), "the gateway stopping") { try await task.value }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(15), "shutdown took \(elapsed)")
        for connection in [silent, halfHead, halfBody, longpoll] {
            #expect(await connection.readUntilClosed(within: .seconds(10)).closed)
        }
    }

    @Test("A chunked body over maxRequestBodySize is 413, like one with a Content-Length")
    func chunkedBodyLimit() async throws {
        var config = GatewayFixture.config()
        config.maxRequestBodySize = 1_000
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let value = String(repeating: "x", count: 2_000)
            let body = "{\"v\":\"\(value)\"}"
            let chunk = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            for path in ["/todo/big", "/todo/big2/attachment"] {
                let connection = try RawConnection(port: ports.adminPort)
                try connection.send(
                    "PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(chunk)")
                let reply = await connection.read(within: .seconds(30)) { bytes in
                    String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n")
                }
                #expect(reply.status == 413, "\(path): \(reply.text.prefix(300))")
            }
            let post = try RawConnection(port: ports.adminPort)
            try post.send(
                "POST /todo/_bulk_docs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(chunk)")
            let reply = await post.read(within: .seconds(30)) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
            #expect(reply.status == 413, "\(reply.text.prefix(300))")
            #expect(try await client.send(port: ports.adminPort, path: "/todo/big").status == 404)
        }
    }
}
