import AsyncHTTPClient
import NIOCore

// MARK: - ReplicatorHTTPClient

/// The HTTP client every replicator shares (on NIO's singleton event loops; never shut down, like
/// `HTTPClient.shared`).
///
/// A failed connection fails its request at once instead of being retried until the request's deadline: the
/// replicator retries with its own backoff and shows `.offline` meanwhile.
enum ReplicatorHTTPClient {
    static let shared = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

    /// The settings of every replicator client (those trusting one certificate add their TLS settings).
    static var configuration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return configuration
    }
}
