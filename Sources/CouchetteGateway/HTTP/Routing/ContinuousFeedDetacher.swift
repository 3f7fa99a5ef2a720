import CouchetteBLIP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

// MARK: - ContinuousFeedDetacher

/// Serves a connection's first request without Hummingbird's connection task when it asks for a continuous
/// `_changes` feed (`GET /{db}/_changes?feed=continuous`; ``DetachingGate``), so that an idle feed holds its state and
/// its connection only.
///
/// The request goes through the listener's whole responder chain (logging, metrics, credentials, CORS, errors) as
/// any other does, with a ``ChangesFeedHandoff`` in its context: the `_changes` handler leaves the feed there instead
/// of streaming it, and the detacher writes the response's head and starts a ``DetachedChangesFeed``. Any other
/// answer (an error, a feed the parameters made normal) is written whole. Either way the response says
/// `Connection: close` and the connection closes after it: nothing serves a detached connection's next request.
/// The context's logger is what Hummingbird would give the request (the application's, with a request ID).
struct ContinuousFeedDetacher: Sendable {
    /// The listener's responder chain.
    let respond: @Sendable (Request, GatewayRequestContext) async throws -> Response
    /// The `Server` header's value.
    let serverName: String
    /// The logger requests' contexts start from, as Hummingbird's application gives them (its level floored).
    let requestLogger: Logger
    /// The gateway's logger, for a feed's failures (an idle feed keeps no copy of the request's metadata).
    let logger: Logger

    /// The gate's rule.
    var rule: DetachingGate.Rule {
        DetachingGate.Rule(applies: Self.applies) { request, exchange in await serve(request, on: exchange) }
    }

    /// Whether a request head asks for a continuous `_changes` feed with `GET` (and no protocol upgrade, which the
    /// connection guard leaves the connection for).
    static func applies(_ head: HTTPRequestHead) -> Bool {
        guard head.method == .GET, !head.asksForUpgrade else { return false }
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasSuffix("/_changes") else { return false }
        return parts[1].split(separator: "&").contains { $0 == "feed=continuous" }
    }

    /// Runs `request` through the responder chain and answers on `exchange`.
    func serve(_ request: HTTPRequest, on exchange: DetachedExchange) async {
        let handoff = ChangesFeedHandoff()
        var requestLogger = requestLogger
        requestLogger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        var context = GatewayRequestContext(
            source: ApplicationRequestContextSource(channel: exchange.channel, logger: requestLogger))
        context.feedHandoff = handoff
        var response: Response
        do {
            let body = HummingbirdCore.RequestBody(buffer: ByteBuffer())
            response = try await respond(Request(head: request, body: body), context)
        } catch {
            // As Hummingbird answers what no middleware turned into a response.
            response = Response(status: .internalServerError)
        }
        response.headers[.date] = DatabaseResolver.httpDate(Date())
        response.headers[.server] = serverName
        response.headers[.connection] = "close"
        do {
            // A middleware may have replaced the handler's answer: the feed goes out under its own 200 only.
            if let feed = handoff.take(), response.status == .ok {
                response.headers[.contentLength] = nil
                try await exchange.write([.head(response.head)])
                await DetachedChangesFeed(feed, exchange: exchange, logger: logger).start()
            } else {
                try await exchange.write([.head(response.head)])
                // The body writer's `finish` ends the response and then the connection.
                try await response.body.write(ExchangeBodyWriter(exchange: exchange))
            }
        } catch {
            exchange.close()
        }
    }
}

// MARK: - ExchangeBodyWriter

/// Writes a response body on a ``DetachedExchange``.
private struct ExchangeBodyWriter: ResponseBodyWriter {
    let exchange: DetachedExchange

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await exchange.write([.body(buffer)])
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        exchange.finish(trailingHeaders)
    }
}
