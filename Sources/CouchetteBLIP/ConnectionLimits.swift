import HummingbirdCore
import NIOCore

// MARK: - ConnectionLimits

/// How long a client may take, and how large a request head may be, before a server (the gateway, a Lite
/// `URLEndpointListener`) answers and closes the connection: the defence against idle, slow and malformed clients
/// (spec: gateway-rest-api.md §1.5), enforced by a ``GuardedHTTPChannel``.
///
/// The gateway's timeouts take Sync Gateway's configuration names, in seconds:
///
/// ```json
/// {"ServerReadTimeout": 200, "ServerWriteTimeout": 200, "ServerIdleTimeout": 90, "ServerShutdownTimeout": 10}
/// ```
///
/// - ``readTimeout``: from a request's head to the end of its body (a slow body gets 408 and a closed connection).
/// - ``writeTimeout``: how long a response may stall because the client does not read it.
/// - ``idleTimeout``: how long a connection may stay open with no request in progress, including one whose head
///   never completes. A continuous or long-poll `_changes` request is in progress, not idle.
/// - ``shutdownTimeout``: how long graceful shutdown waits for in-flight requests before closing what is left.
public struct ConnectionLimits: Sendable, Equatable {
    /// The limit from a request's head to the end of its body (`ServerReadTimeout`), default 200 s.
    public var readTimeout: Duration

    /// The longest a response may wait for the client to read it (`ServerWriteTimeout`), default 200 s.
    public var writeTimeout: Duration

    /// The longest a connection may stay open with no request in progress (`ServerIdleTimeout`), default 90 s.
    public var idleTimeout: Duration

    /// The longest graceful shutdown waits before closing open connections (`ServerShutdownTimeout`), default 10 s.
    public var shutdownTimeout: Duration

    /// The longest request target (path and query) in bytes; longer ones get 414. 16 KiB.
    public var maxURLLength: Int

    /// The most bytes of request line and headers together; more get 431. 1 MiB, as Go's HTTP server allows.
    public var maxHeaderBytes: Int

    /// The most header lines; more get 431. 256.
    public var maxHeaderCount: Int

    /// Creates limits; the defaults are those of a configuration that sets none.
    public init(
        readTimeout: Duration = .seconds(200),
        writeTimeout: Duration = .seconds(200),
        idleTimeout: Duration = .seconds(90),
        shutdownTimeout: Duration = .seconds(10),
        maxURLLength: Int = 16 << 10,
        maxHeaderBytes: Int = 1 << 20,
        maxHeaderCount: Int = 256
    ) {
        self.readTimeout = readTimeout
        self.writeTimeout = writeTimeout
        self.idleTimeout = idleTimeout
        self.shutdownTimeout = shutdownTimeout
        self.maxURLLength = maxURLLength
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
    }

    /// Hummingbird's HTTP/1 settings for these limits: the idle timeout between requests, and a request decoder that
    /// overflows (431) at the head limits.
    public var http1Configuration: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            idleTimeout: TimeAmount(idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: maxHeaderBytes, maxHeaderListSize: maxHeaderBytes,
                maxHeaderFieldCount: maxHeaderCount))
    }
}
