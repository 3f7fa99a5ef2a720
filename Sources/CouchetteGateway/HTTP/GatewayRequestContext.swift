import HTTPTypes
import Hummingbird
import Synchronization

// MARK: - GatewayRequestContext

/// The per-request context of both listeners.
public struct GatewayRequestContext: RequestContext {
    /// Hummingbird's core storage: logger, route parameters, endpoint path.
    public var coreContext: CoreRequestContextStorage

    /// Headers handlers want on the response whatever it turns out to be (a refreshed session cookie);
    /// ``ResponseHeadersMiddleware`` adds them.
    public let extraResponseHeaders = ExtraResponseHeaders()

    /// The client's IP address, for throttling failed logins; nil when the connection has none (e.g. a Unix socket).
    public let clientAddress: String?

    /// Where a continuous `_changes` feed is left for the ``ContinuousFeedDetacher`` serving the request; nil when
    /// Hummingbird serves it (the feed then streams as the response body).
    var feedHandoff: ChangesFeedHandoff?

    /// Creates a context for a new request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The percent-decoded path segment of route parameter `name` (`{db}`, `{doc}`, …): an ID containing `/`
    /// arrives as `%2F` and is decoded only after routing (spec: gateway-rest-api.md §1.2).
    ///
    /// - Parameter allowingUnderscore: Whether a segment starting with `_` is accepted; such segments are
    ///   special endpoints for databases and documents.
    /// - Throws: ``GatewayError/unknownURL`` when the parameter is absent, or starts with `_` where not allowed.
    func pathSegment(_ name: String, allowingUnderscore: Bool = true) throws(GatewayError) -> String {
        guard let raw = parameters.get(name) else { throw .unknownURL }
        let segment = raw.removingPercentEncoding ?? raw
        guard allowingUnderscore || !segment.hasPrefix("_") else { throw .unknownURL }
        return segment
    }
}

// MARK: - ExtraResponseHeaders

/// Response headers collected while a request is handled.
public final class ExtraResponseHeaders: Sendable {
    private let fields = Mutex(HTTPFields())

    /// Adds a header.
    public func append(_ name: HTTPField.Name, _ value: String) {
        fields.withLock { $0.append(HTTPField(name: name, value: value)) }
    }

    /// The headers collected so far.
    public var all: HTTPFields {
        fields.withLock { $0 }
    }
}
