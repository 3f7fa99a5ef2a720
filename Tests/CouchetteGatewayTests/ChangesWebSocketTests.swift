import CompressNIO
import CouchetteCore
import Foundation
import HummingbirdWSClient
import NIOCore
import Testing

@testable import CouchetteGateway

// MARK: - WebSocket

extension ChangesTests {
    /// `GET /{db}/_changes?feed=websocket` (gateway-rest-api.md §11.4).
    @Suite("_changes over WebSocket", .timeLimit(.minutes(5)))
    struct WebSocket {
        @Test("Options in the first message; batches of at most 20; [] once caught up; new entries; empty heartbeats")
        func feed() async throws {
            try await StreamingGateway.run { _, client, ports in
                for index in 1...25 { try await ChangesTests.put(client, port: ports.adminPort, "doc\(index)", [:]) }
                let close = try await StreamingWebSocket.run(
                    port: ports.adminPort, options: ["since": 0, "heartbeat": 50, "include_docs": true]
                ) { messages, _ in
                    let first = try StreamingWebSocket.entries(try await messages.next())
                    let second = try StreamingWebSocket.entries(try await messages.next())
                    #expect(first.map { $0["seq"] } == (1...20).map { .int(Int64($0)) })
                    #expect(second.map { $0["seq"] } == (21...25).map { .int(Int64($0)) })
                    #expect(first.first?["doc"]?["_id"] == "doc1")
                    #expect(StreamingWebSocket.text(try await messages.next()) == "[]")

                    try await ChangesTests.put(client, port: ports.adminPort, "late", [:])
                    var message = try await messages.next()
                    while StreamingWebSocket.text(message) == "" { message = try await messages.next() }
                    #expect(try StreamingWebSocket.entries(message).map { $0["id"] } == ["late"])
                    #expect(StreamingWebSocket.text(try await messages.next()) == "")  // heartbeat
                }
                #expect(close == nil || close?.closeCode == .normalClosure)
            }
        }

        @Test("The query overrides the message; the feed closes normally when its limit is reached")
        func limit() async throws {
            try await StreamingGateway.run { _, client, ports in
                for id in ["a", "b", "c"] { try await ChangesTests.put(client, port: ports.adminPort, id, [:]) }
                let close = try await StreamingWebSocket.run(
                    port: ports.adminPort, path: "/todo/_changes?feed=websocket&limit=2", options: ["limit": 1]
                ) { messages, _ in
                    let batch = try StreamingWebSocket.entries(try await messages.next())
                    #expect(batch.map { $0["seq"] } == [1, 2])
                    let end = try await messages.next()
                    #expect(end == nil)
                }
                #expect(close?.closeCode == .normalClosure)
            }
        }

        @Test("A user's WebSocket feed on the public port sees only their channels")
        func userChannels() async throws {
            try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "forA", ["channels": ["a"]])
                try await ChangesTests.put(client, port: ports.adminPort, "forB", ["channels": ["b"]])
                try await StreamingWebSocket.run(port: ports.publicPort, user: ("bob", "pass")) { messages, _ in
                    let batch = try StreamingWebSocket.entries(try await messages.next())
                    #expect(batch.map { $0["id"] } == ["forB"])
                    let caughtUp = try await messages.next()
                    #expect(StreamingWebSocket.text(caughtUp) == "[]")
                }
            }
        }

        @Test("Errors close the socket with 4000 + status and the reason")
        func errors() async throws {
            try await StreamingGateway.run(ChangesTests.usersConfig()) { _, _, ports in
                let unknown = try await StreamingWebSocket.run(
                    port: ports.adminPort, path: "/nope/_changes?feed=websocket"
                ) { messages, _ in
                    let end = try await messages.next()
                    #expect(end == nil)
                }
                #expect(unknown?.closeCode == .unknown(4404))
                #expect(unknown?.reason == "no such database \"nope\"")

                let anonymous = try await StreamingWebSocket.run(port: ports.publicPort) { messages, _ in
                    let end = try await messages.next()
                    #expect(end == nil)
                }
                #expect(anonymous?.closeCode == .unknown(4401))

                let badOptions = try await StreamingWebSocket.run(
                    port: ports.adminPort, options: ["since": "nope"]
                ) { messages, _ in
                    let end = try await messages.next()
                    #expect(end == nil)
                }
                #expect(badOptions?.closeCode == .unknown(4400))
                #expect(badOptions?.reason == "Invalid sequence")
            }
        }

        @Test("Taking the database offline closes the socket")
        func offline() async throws {
            try await StreamingGateway.run { server, _, ports in
                let close = try await StreamingWebSocket.run(port: ports.adminPort) { messages, _ in
                    let caughtUp = try await messages.next()
                    #expect(StreamingWebSocket.text(caughtUp) == "[]")
                    try await StreamingGateway.database(server).setState(.offline)
                    let end = try await messages.next()
                    #expect(end == nil)
                }
                #expect(close?.closeCode == .normalClosure)
            }
        }

        @Test("accept_encoding=gzip: longer messages are binary flushes of one gzip stream")
        func gzip() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "doc1", ["text": "hello"])
                try await StreamingWebSocket.run(port: ports.adminPort, options: ["accept_encoding": "gzip"]) {
                    messages, _ in
                    let decompressor = CompressionAlgorithm.gzip().decompressor
                    try decompressor.startStream()
                    defer { try? decompressor.finishStream() }
                    func inflate(_ message: WebSocketMessage?) throws -> String {
                        guard case .binary(var buffer)? = message else {
                            return StreamingWebSocket.text(message) ?? "(closed)"
                        }
                        var output = ByteBuffer()
                        output.reserveCapacity(1 << 16)
                        try decompressor.streamInflate(from: &buffer, to: &output)
                        return String(buffer: output)
                    }
                    let firstMessage = try await messages.next()
                    guard case .binary? = firstMessage else {
                        Issue.record("expected a binary message, got \(String(describing: firstMessage))")
                        return
                    }
                    let first = try inflate(firstMessage)
                    #expect(try JSONValue(parsing: Array(first.utf8)).arrayValue?.first?["id"] == "doc1")
                    let caughtUp = try await messages.next()
                    #expect(caughtUp == .text("[]"))  // short: plain text
                    try await ChangesTests.put(client, port: ports.adminPort, "doc2", [:])
                    let secondMessage = try await messages.next()
                    guard case .binary? = secondMessage else {
                        Issue.record("expected a binary message, got \(String(describing: secondMessage))")
                        return
                    }
                    let second = try inflate(secondMessage)
                    #expect(try JSONValue(parsing: Array(second.utf8)).arrayValue?.first?["id"] == "doc2")
                }
            }
        }
    }
}
