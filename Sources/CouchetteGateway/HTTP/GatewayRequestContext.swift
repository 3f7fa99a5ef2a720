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

    /// Creates a context for a new request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
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
