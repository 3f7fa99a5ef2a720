import Hummingbird

// MARK: - MetricsMiddleware

/// Counts requests for `_expvar` and `/metrics` (``GatewayMetrics``): total and in flight, per listener, plus the
/// single-document reads (`GET /{db}/{doc}` → 200) and writes (`PUT`/`DELETE /{db}/{doc}`, `PUT` of an attachment,
/// `POST /{db}/`) that succeeded.
///
/// Bulk endpoints report their documents themselves (``GatewayMetrics/documentsRead(_:)``,
/// ``GatewayMetrics/revisionsAdded(_:)``). A request stops being active when its response head is ready; streamed
/// `_changes` feeds are counted apart (``GatewayMetrics/changesFeedOpened()``).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    // MARK: - Properties

    /// The listener whose requests are counted.
    let listener: GatewayListener

    /// Where counts go.
    let metrics: GatewayMetrics

    // MARK: - Initialiser

    /// Creates the middleware of one listener; servers count into ``GatewayMetrics/shared``.
    init(listener: GatewayListener, metrics: GatewayMetrics = .shared) {
        self.listener = listener
        self.metrics = metrics
    }

    // MARK: - Handling

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        metrics.requestStarted(on: listener)
        defer { metrics.requestFinished(on: listener) }
        let response = try await next(request, context)
        switch Self.documentEvent(method: request.method, path: request.uri.path, status: response.status.code) {
        case .read: metrics.documentsRead()
        case .write: metrics.revisionsAdded()
        case nil: break
        }
        return response
    }

    // MARK: - Classification

    /// A single-document event a response stands for.
    enum DocumentEvent: Equatable {
        /// A document was read.
        case read
        /// A revision was written.
        case write
    }

    /// The document event of a successful request, from its method, path and status; `nil` for anything else.
    ///
    /// ```swift
    /// MetricsMiddleware.documentEvent(method: .get, path: "/todo/doc1", status: 200)     // .read
    /// MetricsMiddleware.documentEvent(method: .put, path: "/todo/doc1/a.txt", status: 201) // .write
    /// MetricsMiddleware.documentEvent(method: .get, path: "/todo/_all_docs", status: 200)  // nil
    /// ```
    static func documentEvent(method: HTTPRequest.Method, path: String, status: Int) -> DocumentEvent? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard (200..<300).contains(status), segments.allSatisfy({ !$0.hasPrefix("_") }) else { return nil }
        switch (method, segments.count) {
        case (.get, 2): return .read
        case (.put, 2), (.delete, 2), (.put, 3), (.post, 1): return .write
        default: return nil
        }
    }
}
