import CouchetteBLIP
import Foundation
import HTTPTypes
import Logging
import NIOPosix
import NIOSSL
import Synchronization
import WSClient

// MARK: - BLIPReplicatorSocket

/// Opens a replicator's WebSocket to a database's `_blipsync` endpoint (spec: blip-sync-protocol.md §1), offering
/// Couchbase Lite 3's subprotocol with the replicator's credentials, and runs a ``BLIPConnection`` on it in the
/// background until either side closes it.
///
/// A refused upgrade says nothing about why, so the database itself is asked (`GET /{db}/`) with the same
/// credentials: its 401, 403 or 404 becomes the error, as the REST protocol would report it.
enum BLIPReplicatorSocket {
    /// The largest WebSocket message (one BLIP frame) accepted.
    static let maximumFrameSize = 1 << 20
    /// How long connecting and upgrading may take.
    static let connectTimeout: Duration = .seconds(10)

    /// Connects to `endpoint` (`ws(s)://host/db/_blipsync`) and returns the connection once upgraded; `closed` is
    /// called when the socket ends.
    ///
    /// - Throws: The database's own error for refused credentials or an unknown database; `.network` otherwise.
    static func connect(
        endpoint: URL, database: RemoteDatabaseClient, headers: [String: String], tls: TLSConfiguration?,
        observer: @escaping BLIPConnection.RequestObserver, handler: @escaping BLIPConnection.RequestHandler,
        closed: @escaping @Sendable () -> Void
    ) async throws -> BLIPConnection {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = maximumFrameSize
        configuration.additionalHeaders[.secWebSocketProtocol] = BLIPSubprotocol.couchbaseMobile3
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { configuration.additionalHeaders[field] = value }
        }
        if tls != nil, ServerCertificateProbe.isIPAddress(endpoint.host ?? "") {
            // The socket names its host in SNI, where an IP address is invalid. With a pinned or self-signed
            // certificate no host name is checked, so any name does; with the system's authorities an IP address
            // cannot be matched (use a host name).
            configuration.sniHostname = "couchette.invalid"
        }
        // WebSocket pings keep a quiet continuous replication's connection (and any proxy's) open.
        configuration.autoPing = .enabled(timePeriod: .seconds(30))
        let settings = configuration
        let opened = Opened()
        do {
            return try await withCheckedThrowingContinuation { continuation in
                opened.set(continuation)
                // A socket cut during the upgrade can leave it waiting forever: the caller gives up after a while.
                Task {
                    try? await Task.sleep(for: connectTimeout)
                    opened.finish(
                        .failure(CouchetteError(.timeout, message: "\(endpoint): no WebSocket upgrade within \(connectTimeout)")))
                }
                Task {
                    await run(endpoint, settings, tls, observer: observer, handler: handler, opened: opened)
                    closed()
                }
            }
        } catch {
            throw await failure(error, endpoint: endpoint, database: database)
        }
    }

    /// Runs the socket until it closes, handing the connection to `opened` once upgraded (or why there is none).
    private static func run(
        _ endpoint: URL, _ configuration: WebSocketClientConfiguration, _ tls: TLSConfiguration?,
        observer: @escaping BLIPConnection.RequestObserver, handler: @escaping BLIPConnection.RequestHandler,
        opened: Opened
    ) async {
        var logger = Logger(label: "couchette.replicator.blip")
        logger.logLevel = .critical
        do {
            try await WebSocketClient.connect(
                url: endpoint.absoluteString, configuration: configuration, tlsConfiguration: tls, logger: logger
            ) { inbound, outbound, _ in
                let transport = WebSocketBLIPTransport(outbound: outbound)
                let connection = BLIPConnection(transport: transport, observer: observer, handler: handler)
                guard opened.finish(.success(connection)) else {
                    await connection.close()  // upgraded after the caller gave up
                    return
                }
                await transport.feed(inbound, to: connection, maximumFrameSize: maximumFrameSize)
            }
            opened.finish(.failure(CouchetteError(.network, message: "\(endpoint): the connection closed")))
        } catch {
            opened.finish(.failure(error))
        }
    }

    /// The error for a connection that could not be opened: the database's answer when the upgrade was refused.
    private static func failure(_ error: any Error, endpoint: URL, database: RemoteDatabaseClient) async -> CouchetteError {
        if let error = error as? CouchetteError { return error }
        if isUntrustedCertificate(error) {
            return CouchetteError(.tlsCertificateUntrusted, message: "\(endpoint): \(error)")
        }
        guard let error = error as? WebSocketClientError, error == .webSocketUpgradeFailed else {
            return CouchetteError(.network, message: "\(endpoint): \(error)")
        }
        do {
            _ = try await database.json(.GET, "")
        } catch {
            return CouchetteError.wrap(error)
        }
        return CouchetteError(.network, message: "\(endpoint): the server refused the WebSocket upgrade")
    }

    /// Whether connecting failed because the server's certificate is not trusted (possibly among the errors of
    /// each address tried).
    private static func isUntrustedCertificate(_ error: any Error) -> Bool {
        switch error {
        case let error as NIOSSLError: RemoteDatabaseClient.isUntrustedCertificate(error)
        case let error as NIOConnectionError: error.connectionErrors.contains { isUntrustedCertificate($0.error) }
        default: false
        }
    }

    /// Resumes the connecting caller once: with the connection, or with why there is none.
    private final class Opened: Sendable {
        private let continuation = Mutex<CheckedContinuation<BLIPConnection, any Error>?>(nil)

        func set(_ continuation: CheckedContinuation<BLIPConnection, any Error>) {
            self.continuation.withLock { $0 = continuation }
        }

        /// Resumes the caller with `result`; false when it was resumed already.
        @discardableResult
        func finish(_ result: Result<BLIPConnection, any Error>) -> Bool {
            guard let continuation = continuation.withLock({ $0.take() }) else { return false }
            continuation.resume(with: result)
            return true
        }
    }
}
