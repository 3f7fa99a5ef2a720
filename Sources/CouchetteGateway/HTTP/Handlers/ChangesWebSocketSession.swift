import CouchetteCore
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

// MARK: - ChangesWebSocketSession

/// One WebSocket `_changes` feed (spec: gateway-rest-api.md §11.4).
///
/// The client's first message is a JSON object with the POST body's keys (the URL's query overrides them).
/// The server then sends JSON arrays of at most 20 entries, `[]` once when caught up, and empty messages as
/// heartbeats; with `"accept_encoding":"gzip"`, messages longer than 8 bytes travel as binary frames holding
/// successive flushes of one gzip stream. The feed ends (normal closure) on timeout, when `limit` entries were
/// sent, when the database goes offline or the server shuts down; it is cancelled when the client closes.
struct ChangesWebSocketSession: Sendable {
    /// The database.
    let database: GatewayDatabase
    /// Who reads.
    let caller: Caller
    /// The URL's query parameters.
    let query: [String: String]
    /// The server configuration (`MaxHeartbeat`).
    let config: GatewayConfig

    /// The largest options message accepted.
    static let maximumOptionsSize = 1 << 20

    // MARK: - Running

    /// Reads the options, then runs the feed while watching for the client closing.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger) async {
        var messages = inbound.messages(maxSize: Self.maximumOptionsSize).makeAsyncIterator()
        let feed: ChangesFeed
        let gzip: Bool
        do {
            guard let message = try await messages.next() else { return }
            let options = try options(from: message)
            let reader = ChangesReader(database: database, caller: caller, options: options)
            feed = ChangesFeed(reader: reader, notifier: database.changeNotifier)
            gzip = options.gzip
        } catch let error as GatewayError {
            try? await ChangesWebSocket.close(outbound, with: error)
            return
        } catch {
            return
        }
        GatewayMetrics.shared.changesFeedOpened()
        defer { GatewayMetrics.shared.changesFeedClosed() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Self.send(feed, to: outbound, gzip: gzip, logger: logger)
            }
            // Reading lets the socket see the client's close; the feed ends by closing, which ends this loop too.
            while (try? await messages.next()) != nil {}
            group.cancelAll()
        }
    }

    /// The options of the first message: a JSON object, under the query.
    private func options(from message: WebSocketMessage) throws(GatewayError) -> ChangesOptions {
        let bytes: [UInt8]
        switch message {
        case .text(let text): bytes = Array(text.utf8)
        case .binary(let buffer): bytes = Array(buffer.readableBytesView)
        }
        var parameters: [String: String] = [:]
        if !bytes.isEmpty {
            guard case .object(let body) = try RequestBody.parse(bytes) else {
                throw .badRequest("The first message must be a JSON object")
            }
            parameters = ChangesOptions.parameters(fromBody: body)
        }
        parameters.merge(query) { _, query in query }
        parameters["feed"] = ChangesFeedType.websocket.rawValue
        return try ChangesOptions(
            parameters: parameters, limits: ChangesHandlers.limits(config),
            currentSequence: database.changeNotifier.lastSequence)
    }

    /// Sends the feed's events until it ends, then closes the socket.
    private static func send(
        _ feed: ChangesFeed, to outbound: WebSocketOutboundWriter, gzip: Bool, logger: Logger
    ) async {
        var feed = feed
        var sender = ChangesWebSocketSender(outbound: outbound, gzip: gzip)
        do {
            while let event = try await feed.next() {
                switch event {
                case .entries(let rows):
                    for message in ChangesFraming.webSocketMessages(rows) { try await sender.send(message) }
                case .caughtUp:
                    try await sender.send(Array("[]".utf8))
                case .heartbeat:
                    try await sender.send([])
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
        } catch let error as GatewayError {
            logger.error("Changes feed failed", metadata: ["error": "\(error.reason)"])
            try? await ChangesWebSocket.close(outbound, with: error)
        } catch {
            // The client went away.
        }
    }
}
