// MARK: - URLEndpointListenerConfiguration

/// What a ``URLEndpointListener`` serves and how (Couchbase Lite 3's `URLEndpointListenerConfiguration`).
///
/// ```swift
/// var config = URLEndpointListenerConfiguration(collections: [try database.defaultCollection()])
/// config.port = 4988
/// config.authenticator = ListenerPasswordAuthenticator { user, password in user == "sync" && password == secret }
/// let listener = URLEndpointListener(config: config)
/// try await listener.start()
/// ```
public struct URLEndpointListenerConfiguration: Sendable {
    /// The collections served, each as a database of the CouchDB replication protocol (``URLEndpointListener``
    /// tells their paths). They must belong to one database.
    public var collections: [Collection]

    /// The TCP port; nil or 0 picks a free one (``URLEndpointListener/port`` tells which).
    public var port: UInt16?

    /// The address of the network interface to listen on (`"127.0.0.1"`, `"::1"`, `"0.0.0.0"`); nil listens on
    /// all interfaces, as Couchbase Lite does.
    public var networkInterface: String?

    /// Serve plain HTTP instead of TLS. Off by default: without a ``tlsIdentity`` the listener makes an anonymous
    /// self-signed one, which clients accept with ``ReplicatorConfiguration/acceptOnlySelfSignedServerCertificate``
    /// or by pinning it.
    public var disableTLS = false

    /// The certificate and key the listener presents; nil makes an anonymous self-signed identity.
    public var tlsIdentity: TLSIdentity?

    /// Checks each request's credentials (HTTP Basic); nil lets every client in.
    public var authenticator: ListenerPasswordAuthenticator?

    /// Refuse every document write (clients can pull, not push); checkpoints may still be saved.
    public var readOnly = false

    /// How long a connection may stay open with no request in progress (before a request's head is complete,
    /// or between requests) before the listener closes it; a replication's WebSocket, kept busy by its pings, is
    /// not idle. Couchette's own setting; the default, 90 s, is Sync Gateway's `ServerIdleTimeout`.
    public var idleTimeout: Duration = .seconds(90)

    /// Creates a configuration serving `collections`.
    public init(collections: [Collection]) {
        self.collections = collections
    }
}
