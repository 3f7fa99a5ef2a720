import Hummingbird

// MARK: - GatewayRequestContext

/// The per-request context of both listeners.
///
/// Later layers add the authenticated user here (as Hummingbird's authentication contexts do).
public struct GatewayRequestContext: RequestContext {
    /// Hummingbird's core storage: logger, route parameters, endpoint path.
    public var coreContext: CoreRequestContextStorage

    /// Creates a context for a new request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
