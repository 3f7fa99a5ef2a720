import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import NIOCore
import NIOSSL
import Synchronization

// MARK: - RecordingHTTPProxy

/// An HTTP proxy on loopback in front of a gateway: forwards every request, records each exchange, and answers
/// the requests `refuses` picks with 404 itself (a peer lacking an endpoint).
///
/// ```swift
/// try await RecordingHTTPProxy.run(targetPort: ports.publicPort, refuses: { $0.path.hasSuffix("/_bulk_get") }) { proxy in
///     … replicate through proxy.port …
///     proxy.exchanges.filter { $0.method == "GET" }
/// }
/// ```
final class RecordingHTTPProxy: Sendable {
    /// One request and its answer.
    struct Exchange: Sendable {
        var method: String
        /// The path with the query.
        var uri: String
        var contentType: String?
        /// The request's headers by lowercased name.
        var headers: [String: String] = [:]
        var requestBytes: Int
        var status: Int
        /// The answer's body size.
        var responseBytes = 0

        var path: String { String(uri.prefix { $0 != "?" }) }
    }

    private let recorded = Mutex<[Exchange]>([])
    private let boundPort = Mutex<Int?>(nil)
    /// Where requests go instead of the target, once ``switchTarget`` said so.
    private let redirected = Mutex<Int?>(nil)
    private let switchTarget: @Sendable (Exchange) -> Int?

    private init(switchTarget: @escaping @Sendable (Exchange) -> Int?) {
        self.switchTarget = switchTarget
    }

    /// Every exchange so far, in order.
    var exchanges: [Exchange] { recorded.withLock { $0 } }

    /// Forgets the exchanges so far.
    func clear() { recorded.withLock { $0.removeAll() } }

    /// The port the proxy listens on.
    var port: Int { boundPort.withLock { $0 ?? 0 } }

    /// Runs a proxy to `127.0.0.1:targetPort` around `body`; with `tls`, clients reach it over HTTPS.
    ///
    /// - Parameter switchTarget: Asked after each exchange; a port it returns is where later requests go (another
    ///   server taking over mid-replication).
    static func run(
        targetPort: Int, tls: TLSConfiguration? = nil, refuses: @escaping @Sendable (Exchange) -> Bool = { _ in false },
        switchTarget: @escaping @Sendable (Exchange) -> Int? = { _ in nil },
        _ body: (RecordingHTTPProxy) async throws -> Void
    ) async throws {
        let proxy = RecordingHTTPProxy(switchTarget: switchTarget)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let router = Router()
        router.on("**", method: .get) { request, _ in try await proxy.forward(request, to: targetPort, http, refuses) }
        for method in [HTTPRequest.Method.post, .put, .delete, .head] {
            router.on("**", method: method) { request, _ in try await proxy.forward(request, to: targetPort, http, refuses) }
        }
        let (ready, readyContinuation) = AsyncStream<Void>.makeStream()
        let application = Application(
            router: router, server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                proxy.boundPort.withLock { $0 = channel.localAddress?.port }
                readyContinuation.yield()
            },
            logger: GatewayFixture.logger)
        let server = Task { try await application.runService(gracefulShutdownSignals: []) }
        for await _ in ready { break }
        var failure: (any Error)?
        do { try await body(proxy) } catch { failure = error }
        server.cancel()
        _ = await server.result
        try await http.shutdown()
        if let failure { throw failure }
    }

    private func forward(
        _ request: Request, to targetPort: Int, _ http: HTTPClient, _ refuses: (Exchange) -> Bool
    ) async throws -> Response {
        let body = try await request.body.collect(upTo: 64 << 20)
        var exchange = Exchange(
            method: request.method.rawValue, uri: request.uri.description, contentType: request.headers[.contentType],
            headers: Dictionary(
                request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { "\($0), \($1)" }),
            requestBytes: body.readableBytes, status: 404)
        guard !refuses(exchange) else {
            recorded.withLock { $0.append(exchange) }
            return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: #"{"error":"not_found"}"#)))
        }
        let port = redirected.withLock { $0 } ?? targetPort
        var outgoing = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(request.uri.description)")
        outgoing.method = .init(rawValue: request.method.rawValue)
        for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        outgoing.body = .bytes(body)
        let response = try await http.execute(outgoing, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        exchange.status = Int(response.status.code)
        exchange.responseBytes = bytes.readableBytes
        recorded.withLock { $0.append(exchange) }
        if let next = switchTarget(exchange) { redirected.withLock { $0 = next } }
        var headers = HTTPFields()
        for header in response.headers {
            guard let name = HTTPField.Name(header.name), name != .contentLength, name != .transferEncoding else { continue }
            headers.append(HTTPField(name: name, value: header.value))
        }
        return Response(
            status: .init(code: Int(response.status.code)), headers: headers, body: .init(byteBuffer: bytes))
    }
}
