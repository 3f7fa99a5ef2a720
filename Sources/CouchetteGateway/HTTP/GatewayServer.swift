#if canImport(Glibc)
    import Glibc
#endif
import Hummingbird
import HummingbirdTLS
import NIOCore
import NIOSSL
import Logging
import ServiceLifecycle

// MARK: - GatewayServer

/// The gateway: a public and an admin HTTP listener over one ``DatabaseRegistry``, run together as one service.
///
/// ```swift
/// let server = try GatewayServer(config: try GatewayConfig.load(contentsOf: "config.json"))
/// try await server.runService()  // until SIGINT or SIGTERM
/// ```
///
/// Tests bind port 0 and wait for the ports instead of sleeping:
///
/// ```swift
/// let task = Task { try await server.run() }
/// let ports = try await server.waitUntilReady()
/// // … requests to ports.publicPort and ports.adminPort …
/// await server.triggerGracefulShutdown()
/// try await task.value
/// ```
///
/// A server runs once. Spec: gateway-rest-api.md §1.1, §3, §4.
public final class GatewayServer: Service, Sendable {
    // MARK: - Properties

    /// The configuration the server was created with.
    public let config: GatewayConfig

    /// The databases served.
    public let registry: DatabaseRegistry

    private let logger: Logger
    private let lifecycle = ServerLifecycle()
    /// The public listener's TLS settings (`SSLCert`, `SSLKey`); nil serves plain HTTP.
    private let publicTLS: TLSConfiguration?

    // MARK: - Initialiser

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - config: The configuration; its `interface` and `adminInterface` are the listen addresses.
    ///   - registry: The databases to serve; by default those of `config`.
    ///   - logger: The logger for startup messages and request lines.
    /// - Throws: ``GatewayError`` naming `SSLCert` or `SSLKey` when only one is set or its PEM file cannot be read.
    public init(
        config: GatewayConfig,
        registry: DatabaseRegistry? = nil,
        logger: Logger = Logger(label: "couchette.gateway")
    ) throws(GatewayError) {
        publicTLS = try GatewayTLS.configuration(certificatePath: config.sslCert, keyPath: config.sslKey)
        self.config = config
        let served: DatabaseRegistry
        if let registry {
            served = registry
        } else {
            served = try DatabaseRegistry(config: config, logger: logger)
        }
        self.registry = served
        // Request lines and server messages reach the Admin UI's log view too.
        self.logger = served.logTail.tee(logger)
    }

    // MARK: - Running

    /// Runs both listeners until graceful shutdown (from a parent service group or
    /// ``triggerGracefulShutdown()``) or task cancellation.
    public func run() async throws {
        try await run(handlingSignals: false, onReady: { _ in })
    }

    /// Runs both listeners, calling `onReady` once both accept connections.
    ///
    /// - Parameter onReady: Called with the bound ports (useful with port 0).
    /// - Throws: Binding errors, or ``GatewayError`` if the server already ran.
    public func run(onReady: @escaping @Sendable (BoundPorts) async -> Void) async throws {
        try await run(handlingSignals: false, onReady: onReady)
    }

    /// Runs both listeners until SIGINT or SIGTERM, then shuts down gracefully and returns.
    ///
    /// - Parameter onReady: Called with the bound ports once both listeners accept connections.
    public func runService(onReady: @escaping @Sendable (BoundPorts) async -> Void = { _ in }) async throws {
        try await run(handlingSignals: true, onReady: onReady)
    }

    /// Waits until both listeners accept connections.
    ///
    /// - Returns: The bound ports.
    /// - Throws: ``GatewayError`` (503) if the server stops or fails before it is ready.
    public func waitUntilReady() async throws -> BoundPorts {
        try await lifecycle.waitUntilReady()
    }

    /// Asks the server to stop accepting connections, finish in-flight requests and return from `run`.
    /// Before `run` the request is remembered.
    public func triggerGracefulShutdown() async {
        await lifecycle.requestShutdown()
    }

    private func run(handlingSignals: Bool, onReady: @escaping @Sendable (BoundPorts) async -> Void) async throws {
        let databaseNames = await registry.names
        logger.info(
            "Starting \(GatewayVersion.productName) \(GatewayVersion.version)",
            metadata: ["databases": .array(databaseNames.map { .string($0) })]
        )
        for warning in config.warnings {
            logger.warning("Configuration: \(warning)")
        }

        // Shut down in reverse order: the feeds end first, so the listeners' graceful shutdown can finish.
        let services: [any Service] = [
            try makeApplication(for: .public), try makeApplication(for: .admin),
            ChangesFeedShutdownService(registry: registry),
        ]
        let group = ServiceGroup(
            configuration: Self.serviceGroupConfiguration(
                services: services, handlingSignals: handlingSignals,
                shutdownTimeout: config.connectionLimits.shutdownTimeout, logger: logger))
        try await lifecycle.start(group: group)

        // Readiness is reported from a child task: Hummingbird accepts connections only after `onServerRunning`
        // returns, so `onReady` must not run inside it (it may well send requests to the server).
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [lifecycle, config, logger] in
                guard let ports = try? await lifecycle.waitUntilReady() else { return }
                let publicAddress = InterfaceAddress(host: config.interface.host, port: ports.publicPort)
                let adminAddress = InterfaceAddress(host: config.adminInterface.host, port: ports.adminPort)
                logger.info("Public interface listening on \(publicAddress)")
                logger.info("Admin interface listening on \(adminAddress)")
                logger.info("Databases: \(databaseNames.isEmpty ? "(none)" : databaseNames.joined(separator: ", "))")
                await onReady(ports)
            }
            do {
                try await group.run()
            } catch {
                let failure = await addressInUse(error) ?? error
                await lifecycle.finish(error: failure)
                throw failure
            }
            await lifecycle.finish(error: nil)
            tasks.cancelAll()
        }
        logger.info("\(GatewayVersion.productName) stopped")
    }

    /// The service group's settings: the signals that start graceful shutdown, and the bound after which what is
    /// still running is cancelled (``ConnectionLimits/shutdownTimeout``). (No cancellation bound: ServiceLifecycle
    /// ends the process when one passes.)
    private static func serviceGroupConfiguration(
        services: [any Service], handlingSignals: Bool, shutdownTimeout: Duration, logger: Logger
    ) -> ServiceGroupConfiguration {
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownTimeout
        return configuration
    }

    /// A bind failure as one clear line naming the port and the setting to change; nil for other errors.
    private func addressInUse(_ error: any Error) async -> GatewayError? {
        guard let io = error as? IOError, io.errnoCode == EADDRINUSE else { return nil }
        let unbound = await lifecycle.unboundListeners
        let (field, address) =
            unbound.contains(.public) || unbound.isEmpty
            ? ("interface", config.interface) : ("adminInterface", config.adminInterface)
        return .invalidConfig(
            field: field,
            problem: "port \(address.port) is already in use; set \"\(field)\" (or --\(field)) to a free address")
    }

    // MARK: - Applications

    /// The Hummingbird application of one listener: its routes table behind request logging and error mapping.
    private func makeApplication(for listener: GatewayListener) throws -> some ApplicationProtocol {
        let renderer = JSONRenderer(pretty: config.pretty)
        let log = GatewayLog(logger: logger, settings: registry.logSettings)
        let environment = RouteEnvironment(
            registry: registry, listener: listener, config: config, renderer: renderer, log: log)
        let routes = GatewayRoutes.table(environment)
        let address = listener == .admin ? config.adminInterface : config.interface

        let router = Router(context: GatewayRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestLogMiddleware(listener: listener, log: log))
        router.add(middleware: MetricsMiddleware(listener: listener))
        if listener == .admin {
            router.add(middleware: AdminCredentialsMiddleware(credentials: config.adminCredentials, renderer: renderer))
            router.add(middleware: AdminCSRFMiddleware(renderer: renderer))
        }
        if listener == .public {
            router.add(middleware: CORSMiddleware(cors: config.cors))
        }
        router.add(middleware: ResponseHeadersMiddleware())
        router.add(middleware: ErrorMiddleware(routes: routes, renderer: renderer))
        routes.register(on: router)

        // Hummingbird's own messages ("Server started…") duplicate ours; keep only its warnings and errors.
        var applicationLogger = logger
        applicationLogger.logLevel = max(logger.logLevel, .warning)
        let lifecycle = lifecycle
        let responder = router.buildResponder()
        // With a PostgreSQL database, its handlers run on the storage threads: a storage call waiting on the network
        // holds one of them, not one of the cooperative threads every database and feed shares.
        let threads = HandlerThreads(placements: registry.placements)
        let detacher = ContinuousFeedDetacher(
            respond: { request, context in
                try await threads.run(forPath: request.uri.path) {
                    try await responder.respond(to: request, context: context)
                }
            }, serverName: GatewayVersion.serverHeader,
            requestLogger: applicationLogger, logger: logger)
        let server = ChangesRoutes.server(
            environment, limits: config.connectionLimits, tls: listener == .public ? publicTLS : nil,
            detacher: detacher)
        return Application(
            responder: ChildTaskResponder(inner: responder, threads: threads),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port),
                serverName: GatewayVersion.serverHeader
            ),
            onServerRunning: { channel in
                await lifecycle.bound(listener, port: channel.localAddress?.port ?? address.port)
            },
            logger: applicationLogger
        )
    }
}
