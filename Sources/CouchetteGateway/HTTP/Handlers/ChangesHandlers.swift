import CouchetteCore
import Hummingbird
import HummingbirdCore
import Logging

// MARK: - ChangesHandlers

/// `GET`/`HEAD`/`POST /{db}/_changes` (spec: gateway-rest-api.md §11): normal, longpoll and continuous feeds.
/// WebSocket feeds are upgraded before routing, by ``ChangesWebSocket``.
struct ChangesHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET / POST

    /// `GET /{db}/_changes`: parameters from the query.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        return try await respond(
            to: target, parameters: Self.queryParameters(of: request.uri), handoff: context.feedHandoff)
    }

    /// `POST /{db}/_changes`: parameters from the JSON body, overridden by the query.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        try RequestBody.requireJSONContentType(request)
        let bytes = try await environment.body.bytes(of: request)
        var parameters: [String: String] = [:]
        if !bytes.isEmpty {
            guard case .object(let body) = try RequestBody.parse(bytes) else {
                throw GatewayError.badRequest("Request body must be a JSON object")
            }
            parameters = ChangesOptions.parameters(fromBody: body)
        }
        parameters.merge(Self.queryParameters(of: request.uri)) { _, query in query }
        return try await respond(to: target, parameters: parameters, handoff: context.feedHandoff)
    }

    // MARK: - Responses

    /// The response for a resolved request and its parameters. A streaming feed logs its failures with the gateway's
    /// logger rather than the request's: an idle feed then keeps no copy of the request's logger and metadata. A
    /// continuous feed is left in `handoff` when there is one (``ContinuousFeedDetacher``), with a response without
    /// a body (the detacher writes the head without its `Content-Length: 0`, then the feed).
    private func respond(
        to target: AuthorizedDatabase, parameters: [String: String], handoff: ChangesFeedHandoff?
    ) async throws -> Response {
        let logger = environment.log.logger
        let notifier = target.database.changeNotifier
        let options = try ChangesOptions(
            parameters: parameters, limits: Self.limits(environment.config), currentSequence: notifier.lastSequence)
        var feedOptions = options
        if options.descending {
            // CouchDB reads the whole feed from the start, newest first; the newest `limit` are kept.
            feedOptions.since = 0
            feedOptions.limit = nil
        }
        let reader = ChangesReader(database: target.database, caller: target.caller, options: feedOptions)
        let feed = ChangesFeed(reader: reader, notifier: notifier)
        switch options.feed {
        case .normal:
            return try await normal(feed, options: options)
        case .longpoll:
            return Self.response(
                contentType: ChangesFraming.jsonContentType,
                body: Self.longpoll(feed, sequenceInterval: options.sequenceInterval, logger: logger))
        case .continuous:
            if let handoff {
                handoff.hold(feed)
                return Self.response(contentType: ChangesFraming.continuousContentType, body: ResponseBody())
            }
            return Self.response(
                contentType: ChangesFraming.continuousContentType, body: Self.continuous(feed, logger: logger))
        case .websocket:
            throw GatewayError.badRequest("feed=websocket needs a WebSocket upgrade request")
        }
    }

    /// A normal feed: everything available now, in one body (newest first with `descending`).
    private func normal(_ feed: ChangesFeed, options: ChangesOptions) async throws(GatewayError) -> Response {
        GatewayMetrics.shared.changesFeedOpened()
        defer { GatewayMetrics.shared.changesFeedClosed() }
        var feed = feed
        var rows: [ChangesRow] = []
        // A normal feed ends once caught up: it never waits.
        while let event = try await feed.next() {
            if case .entries(let batch) = event { rows += batch }
        }
        var lastSequence = feed.lastSequence
        if options.descending {
            rows = Array(rows.reversed().prefix(options.limit ?? .max))
            lastSequence = rows.last?.sequence ?? lastSequence
        }
        var thinning = ChangesFraming.SequenceThinning(interval: options.sequenceInterval)
        var buffer = ChangesFraming.resultsOpening
        buffer.writeImmutableBuffer(ChangesFraming.results(thinning.apply(rows, final: true), continuing: false))
        buffer.writeImmutableBuffer(ChangesFraming.resultsClosing(lastSequence: lastSequence))
        return Self.response(contentType: ChangesFraming.jsonContentType, body: ResponseBody(byteBuffer: buffer))
    }

    /// A longpoll feed: the JSON body, written once entries arrive (heartbeats before them), or empty on timeout.
    /// With `seq_interval`, each batch is held until the next event says whether its last entry ends the feed.
    private static func longpoll(_ feed: ChangesFeed, sequenceInterval: Int?, logger: Logger) -> ResponseBody {
        ResponseBody { (writer: inout any ResponseBodyWriter) in
            GatewayMetrics.shared.changesFeedOpened()
            defer { GatewayMetrics.shared.changesFeedClosed() }
            var feed = feed
            var thinning = ChangesFraming.SequenceThinning(interval: sequenceInterval)
            var held: [ChangesRow] = []
            try await writer.write(ChangesFraming.resultsOpening)
            var continuing = false
            while let event = await Self.next(&feed, logger: logger) {
                switch event {
                case .entries(let rows):
                    if !held.isEmpty {
                        try await writer.write(
                            ChangesFraming.results(thinning.apply(held, final: false), continuing: continuing))
                        continuing = true
                    }
                    held = rows
                case .heartbeat:
                    try await writer.write(ChangesFraming.heartbeat)
                case .caughtUp:
                    break
                }
            }
            if !held.isEmpty {
                try await writer.write(ChangesFraming.results(thinning.apply(held, final: true), continuing: continuing))
            }
            try await writer.write(ChangesFraming.resultsClosing(lastSequence: feed.lastSequence))
            try await writer.finish(nil)
        }
    }

    /// A continuous feed: entries one per line as they happen, `\n` heartbeats, until the feed ends.
    private static func continuous(_ feed: ChangesFeed, logger: Logger) -> ResponseBody {
        ResponseBody { (writer: inout any ResponseBodyWriter) in
            GatewayMetrics.shared.changesFeedOpened()
            defer { GatewayMetrics.shared.changesFeedClosed() }
            var feed = feed
            while let event = await Self.next(&feed, logger: logger) {
                switch event {
                case .entries(let rows): try await writer.write(ChangesFraming.lines(rows))
                case .heartbeat: try await writer.write(ChangesFraming.heartbeat)
                case .caughtUp: break
                }
            }
            try await writer.finish(nil)
        }
    }

    // MARK: - Helpers

    /// The feed's next event; a storage error is logged and ends the feed (the response is under way).
    private static func next(_ feed: inout ChangesFeed, logger: Logger) async -> ChangesFeed.Event? {
        do {
            return try await feed.next()
        } catch {
            logger.error("Changes feed failed", metadata: ["error": "\(error.reason)"])
            return nil
        }
    }

    /// A `_changes` response with its content type and `Cache-Control`.
    private static func response(contentType: String, body: ResponseBody) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        headers[.cacheControl] = ChangesFraming.cacheControl
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The query parameters of a URI (the last value wins for repeated names).
    static func queryParameters(of uri: URI) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in uri.queryParameters {
            parameters[String(name)] = String(value)
        }
        return parameters
    }

    /// The heartbeat bounds: the floor (lowered only by tests) and the configured `MaxHeartbeat`.
    static func limits(_ config: GatewayConfig) -> ChangesOptions.Limits {
        ChangesOptions.Limits(
            minimumHeartbeat: ChangesFeedSettings.minimumHeartbeat,
            maximumHeartbeat: config.maxHeartbeat.map { .seconds($0) })
    }
}
