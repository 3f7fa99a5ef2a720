import CouchetteBLIP
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore

@testable import CouchetteGateway

// MARK: - BLIPTestClient

/// A BLIP client for `/{db}/_blipsync` tests: a WebSocket offering Couchbase Lite's subprotocols, with a
/// ``BLIPConnection`` on it (the gateway's own WebSocket transport, the other way round).
///
/// ```swift
/// try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
///     let reply = try await connection.send(properties: ["Profile": "getCheckpoint", "client": "cp-1"])
/// }
/// ```
enum BLIPTestClient {
    /// Connects, runs `body` with the connection, then closes it (code 1000) and waits for the gateway's close.
    ///
    /// - Parameter handler: Answers the gateway's requests (`changes`, `rev`); by default `ERR BLIP/404`.
    static func run(
        port: Int, database: String = "todo", user: (String, String)? = nil,
        handler: @escaping BLIPConnection.RequestHandler = { request, _ in request.errorReply(domain: "BLIP", code: 404) },
        _ body: @escaping @Sendable (BLIPConnection) async throws -> Void
    ) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 20
        configuration.additionalHeaders[.secWebSocketProtocol] = BLIPSubprotocol.spoken.joined(separator: ",")
        if let (name, password) = user {
            configuration.additionalHeaders[.authorization] =
                "Basic " + Data("\(name):\(password)".utf8).base64EncodedString()
        }
        var logger = Logger(label: "couchette.tests.blip")
        logger.logLevel = .critical
        _ = try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/\(database)/_blipsync", configuration: configuration, logger: logger
        ) { inbound, outbound, _ in
            let connection = BLIPConnection(transport: WebSocketBLIPTransport(outbound: outbound), handler: handler)
            let reading = Task {
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if case .binary(let frame) = message { await connection.receive(frame) }
                }
                await connection.transportClosed()
            }
            // Closing normally (1000) and waiting for the gateway's echo ends the reading task by itself; cancelling
            // it instead raced with the client's own close and made `connect` throw `CancellationError`.
            do {
                try await body(connection)
            } catch {
                await connection.close()
                _ = await reading.result
                throw error
            }
            await connection.close()
            _ = await reading.result
        }
    }
}
