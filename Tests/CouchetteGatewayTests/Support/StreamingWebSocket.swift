import CouchetteCore
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore

// MARK: - StreamingWebSocket

/// A WebSocket client for `_changes?feed=websocket` tests, over HummingbirdWSClient.
///
/// ```swift
/// let close = try await StreamingWebSocket.run(port: ports.adminPort, options: ["since": 0]) { messages, _ in
///     let first = try await messages.next()  // .text("[{…},…]")
/// }
/// ```
enum StreamingWebSocket {
    /// Connects to `ws://127.0.0.1:<port><path>`, sends `options` as the first message (unless nil), and runs
    /// `body` with the incoming messages and the writer. Returning closes the socket.
    ///
    /// - Returns: The server's close frame, if it closed the socket.
    @discardableResult
    static func run(
        port: Int, path: String = "/todo/_changes?feed=websocket", options: JSONValue? = [:],
        user: (String, String)? = nil,
        _ body: @escaping @Sendable (inout WebSocketInboundMessageStream.AsyncIterator, WebSocketOutboundWriter)
            async throws -> Void
    ) async throws -> WebSocketCloseFrame? {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 20
        if let (name, password) = user {
            let token = Data("\(name):\(password)".utf8).base64EncodedString()
            configuration.additionalHeaders[.authorization] = "Basic \(token)"
        }
        var logger = Logger(label: "couchette.tests.websocket")
        logger.logLevel = .critical
        return try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)\(path)", configuration: configuration, logger: logger
        ) { inbound, outbound, _ in
            if let options { try await outbound.write(.text(options.serializedString())) }
            var messages = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            try await body(&messages, outbound)
        }
    }

    /// The text of a message (binary messages as UTF-8).
    static func text(_ message: WebSocketMessage?) -> String? {
        switch message {
        case .text(let text)?: text
        case .binary(let buffer)?: String(buffer: buffer)
        case nil: nil
        }
    }

    /// The entries of a text message holding a JSON array.
    static func entries(_ message: WebSocketMessage?) throws -> [JSONValue] {
        guard let text = text(message), case .array(let entries) = try JSONValue(parsing: Array(text.utf8)) else {
            throw StreamingError.endedEarly([text(message) ?? "(closed)"])
        }
        return entries
    }
}
