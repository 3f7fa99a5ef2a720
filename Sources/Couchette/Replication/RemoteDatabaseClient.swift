import AsyncHTTPClient
import CouchetteCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

// MARK: - RemoteDatabaseClient

/// HTTP requests to one remote database (its URL, headers and credentials), answers read whole, and HTTP failures
/// as ``CouchetteError``s: 401/403/404/409 keep their meaning, other failures and network errors are `.network`
/// errors carrying the status.
struct RemoteDatabaseClient: Sendable {
    /// The database's URL, without a trailing slash.
    let url: URL
    /// Headers sent with every request (authentication included).
    let headers: [String: String]
    /// Which TLS certificates an `https` database may present.
    let trust: ServerTrust
    /// The HTTP client for ``trust``, made at the first request (a self-signed certificate is read first).
    private let resolvedClient = ResolvedClient()

    private final class ResolvedClient: Sendable {
        let client = Mutex<HTTPClient?>(nil)
    }

    /// An answer: its status, `Content-Type` and bytes.
    struct Reply: Sendable {
        var status: Int
        var contentType: String?
        var bytes: [UInt8]

        /// The body as JSON (null when it is not JSON).
        var json: JSONValue { (try? JSONValue(parsing: bytes)) ?? .null }
    }

    /// The body a request sends.
    enum Body {
        case json(JSONValue)
        case multipart(MultipartBody)
        /// Bytes produced as the request goes out (sent chunked), with their `Content-Type`.
        case stream(contentType: String, AsyncThrowingStream<ByteBuffer, any Error>)
    }

    init(url: URL, headers: [String: String], trust: ServerTrust = .system) {
        self.trust = trust
        self.url = url.absoluteString.hasSuffix("/") ? url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent) : url
        self.headers = headers
    }

    /// The URL without credentials.
    var displayURL: String { Self.displayURL(of: url) }

    /// `url` without the credentials it may carry.
    static func displayURL(of url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        return components?.string ?? url.absoluteString
    }

    /// Sends a request and returns the JSON answer.
    ///
    /// - Throws: The error of a status outside 2xx (see ``error(status:reason:)``); `.network` when the peer could
    ///   not be reached.
    func json(
        _ method: HTTPMethod, _ path: String, query: [String] = [], body: JSONValue? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> JSONValue {
        try await send(method, path, query: query, body: body.map(Body.json), timeout: timeout).json
    }

    /// Sends a request and returns the answer whatever its form.
    func send(
        _ method: HTTPMethod, _ path: String, query: [String] = [], body: Body? = nil, accept: String = "application/json",
        timeout: Duration = .seconds(60)
    ) async throws -> Reply {
        let (response, bytes) = try await exchange(method, path, query: query, body: body, accept: accept, timeout: timeout) {
            try await $0.body.collect(upTo: 256 << 20)
        }
        return Reply(
            status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
            bytes: Array(buffer: bytes))
    }

    /// Sends a request and hands a 2xx answer to `read` as it arrives (its body not read yet); other answers throw
    /// as ``send(_:_:query:body:accept:timeout:)`` does.
    func exchange<Result>(
        _ method: HTTPMethod, _ path: String, query: [String] = [], body: Body? = nil, accept: String = "application/json",
        timeout: Duration = .seconds(60), read: (HTTPClientResponse) async throws -> Result
    ) async throws -> (HTTPClientResponse, Result) {
        var request = HTTPClientRequest(
            url: url.absoluteString + "/" + path + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Accept", value: accept)
        switch body {
        case .json(let json)?:
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json.serialized()))
        case .multipart(let multipart)?:
            request.headers.add(name: "Content-Type", value: multipart.contentType)
            request.body = .bytes(ByteBuffer(bytes: multipart.serialized()))
        case .stream(let contentType, let bytes)?:
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .stream(bytes, length: .unknown)
        case nil:
            break
        }
        do {
            let response = try await httpClient().execute(request, timeout: .init(timeout))
            guard (200..<300).contains(response.status.code) else {
                let bytes = try await response.body.collect(upTo: 1 << 20)
                let reason = (try? JSONValue(parsing: Array(buffer: bytes)))?["reason"]?.stringValue
                throw Self.error(status: Int(response.status.code), reason: reason ?? response.status.reasonPhrase)
            }
            return (response, try await read(response))
        } catch let error as CouchetteError {
            throw error
        } catch let error as NIOSSLError where Self.isUntrustedCertificate(error) {
            throw CouchetteError(.tlsCertificateUntrusted, message: "\(method) \(displayURL)/\(path): \(error)")
        } catch {
            try Task.checkCancellation()
            throw CouchetteError(.network, message: "\(method) \(displayURL)/\(path): \(error)")
        }
    }

    /// Whether a TLS failure is the peer's certificate being refused (not retried), rather than a connection that
    /// broke (retried as a network error).
    static func isUntrustedCertificate(_ error: NIOSSLError) -> Bool {
        switch error {
        case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel: true
        case .handshakeFailed: "\(error)".contains("CERTIFICATE_VERIFY_FAILED")
        default: false
        }
    }

    /// The client for ``trust``: resolved once, then reused.
    private func httpClient() async throws -> HTTPClient {
        if let client = resolvedClient.client.withLock({ $0 }) { return client }
        let client = try await trust.client(for: url)
        resolvedClient.client.withLock { $0 = client }
        return client
    }

    /// The error for an HTTP status: 401/403/404/409 keep their meaning, others are network errors.
    static func error(status: Int, reason: String) -> CouchetteError {
        let code: CouchetteError.Code =
            switch status {
            case 400: .badInput
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 409: .conflict
            default: .network
            }
        return CouchetteError(code, message: reason, status: status)
    }

    /// `text` percent-encoded for a path segment or query value.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
