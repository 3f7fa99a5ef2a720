import CouchetteBLIP
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

// MARK: - URLEndpointListener

/// Serves collections of a database to other devices (Couchbase Lite 3's peer-to-peer `URLEndpointListener`) over
/// the CouchDB replication protocol and over Couchbase Lite's BLIP protocol (`/{db}/_blipsync`): a ``Replicator``
/// with an `http(s)://` or `ws(s)://` ``URLEndpoint``, a Couchbase Lite peer, PouchDB or any CouchDB client
/// replicates with them, pushing, pulling, one-shot or continuous.
///
/// ```swift
/// var config = URLEndpointListenerConfiguration(collections: [try database.defaultCollection()])
/// config.disableTLS = true
/// let listener = URLEndpointListener(config: config)
/// try await listener.start()
/// print(listener.urls)        // [http://localhost:54321/todo]
/// // … peers replicate …
/// await listener.stop()
/// ```
///
/// Each collection is one database of the protocol: the default collection at `/{database name}`, another at
/// `/{database name}.{scope}.{collection}` (`/{database name}.{collection}` in the default scope), Sync Gateway's
/// keyspace names. The endpoints are those replicators use (`_changes` normal, longpoll and continuous,
/// `_revs_diff`, `_bulk_get`, `_bulk_docs`, documents with `open_revs`, `_local` checkpoints) and the plain
/// document REST calls of CouchDB (`_all_docs`, `PUT`, `POST`, `DELETE`, attachments).
public final class URLEndpointListener: Sendable {
    /// The configuration the listener was made with.
    public let config: URLEndpointListenerConfiguration

    private struct State {
        var task: Task<Void, any Error>?
        var connections: ListenerConnections?
        var port: UInt16?
        var identity: TLSIdentity?
    }

    private let state = Mutex(State())

    /// Creates a listener; ``start()`` starts it.
    public init(config: URLEndpointListenerConfiguration) {
        self.config = config
    }

    /// The port it listens on while started.
    public var port: UInt16? { state.withLock { $0.task == nil ? nil : $0.port } }

    /// The identity it presents while started with TLS (the given one, or the anonymous one it made).
    public var tlsIdentity: TLSIdentity? { state.withLock { $0.task == nil ? nil : $0.identity } }

    /// The URLs of the served collections while started (with `localhost` when listening on every interface).
    public var urls: [URL] {
        guard let port else { return [] }
        let scheme = config.disableTLS ? "http" : "https"
        var host = config.networkInterface ?? "localhost"
        if ["0.0.0.0", "::"].contains(host) { host = "localhost" }
        if host.contains(":") { host = "[\(host)]" }
        return ListenerResponder.servedNames(config.collections).compactMap {
            URL(string: "\(scheme)://\(host):\(port)/\($0.name)")
        }
    }

    /// Starts listening; returns once connections are accepted.
    ///
    /// - Throws: `.badInput` when no collection is configured or they belong to several databases; `.busy` when
    ///   already started; `.network` when the port cannot be bound.
    public func start() async throws {
        guard let database = config.collections.first?.database else {
            throw CouchetteError(.badInput, message: "A listener needs at least one collection")
        }
        guard config.collections.allSatisfy({ $0.database === database }) else {
            throw CouchetteError(.badInput, message: "A listener's collections must belong to one database")
        }
        let identity = config.disableTLS ? nil : try config.tlsIdentity ?? TLSIdentity.anonymous()
        let responder = ListenerResponder(
            collections: config.collections, authenticator: config.authenticator, readOnly: config.readOnly)
        let (bound, boundContinuation) = AsyncStream<UInt16>.makeStream()
        var logger = Logger(label: "couchette.listener")
        // Stopping cancels the server, which Hummingbird reports as errors; failures to start are thrown.
        logger.logLevel = .critical
        // Plain HTTP, and `/{db}/_blipsync` upgraded to BLIP replication connections (their credentials checked before,
        // so that a refusal is a 401 challenge), behind the gateway's connection guard (malformed requests answered,
        // idle and slow clients closed); every connection tracked.
        let connections = ListenerConnections()
        let tlsConfiguration = identity?.serverConfiguration
        let limits = ConnectionLimits(idleTimeout: config.idleTimeout)
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: limits.http1Configuration, ws: WebSocketServerConfiguration())
        let server = HTTPServerBuilder { respond in
            let guarded = GuardedHTTPChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: respond, configuration: channelConfiguration) {
                    head, channel, _ in responder.blipUpgrade(head, channel: channel)
                },
                limits: limits,
                upgradeGate: {
                    UpgradeGate(applies: ListenerResponder.isBLIPUpgrade) { head, _ in responder.blipRefusal(head) }
                }
            ) { line in Log.shared.emit(.warning, .listener, line) }
            let http = ListenerConnections.Tracked(base: guarded, connections: connections)
            guard let tlsConfiguration else { return http }
            return try TLSChannel(http, tlsConfiguration: tlsConfiguration)
        }
        let application = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await responder.respond(to: request) },
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(config.networkInterface ?? "0.0.0.0", port: Int(config.port ?? 0)),
                serverName: "Couchette/\(Database.version)"),
            onServerRunning: { channel in
                boundContinuation.yield(UInt16(channel.localAddress?.port ?? 0))
                boundContinuation.finish()
            },
            logger: logger)
        try state.withLock { state in
            guard state.task == nil else { throw CouchetteError(.busy, message: "The listener is already started") }
            state.identity = identity
            state.connections = connections
            state.task = Task {
                defer { boundContinuation.finish() }
                try await application.run()
            }
        }
        var iterator = bound.makeAsyncIterator()
        guard let port = await iterator.next() else {
            let task = state.withLock { state in
                defer { state.task = nil }
                return state.task
            }
            do {
                try await task?.value
            } catch {
                throw CouchetteError(.network, message: "The listener could not start: \(error)")
            }
            throw CouchetteError(.network, message: "The listener stopped before it started")
        }
        state.withLock { $0.port = port }
    }

    /// Stops listening and ends the connections (continuous feeds included); returns once it has stopped.
    public func stop() async {
        let (task, connections) = state.withLock { state in
            defer {
                state.task = nil
                state.connections = nil
            }
            return (state.task, state.connections)
        }
        task?.cancel()
        connections?.closeAll()
        _ = try? await task?.value
    }
}
