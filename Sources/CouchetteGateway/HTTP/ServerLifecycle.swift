import ServiceLifecycle

// MARK: - ServerLifecycle

/// The run state of a ``GatewayServer``: which listeners are bound, who waits for readiness, and the service
/// group to shut down.
///
/// Events come from Hummingbird's `onServerRunning` callbacks and from ``GatewayServer``'s `run`; no polling
/// and no sleeps.
actor ServerLifecycle {
    // MARK: - State

    private enum Phase {
        case idle
        case running(ServiceGroup)
        case finished
    }

    private var phase = Phase.idle
    private var shutdownRequested = false
    private var publicPort: Int?
    private var adminPort: Int?
    private var readiness: Result<BoundPorts, GatewayError>?
    private var waiters: [CheckedContinuation<BoundPorts, any Error>] = []

    // MARK: - Run events

    /// Records the start of a run; a shutdown requested earlier is forwarded to the group.
    ///
    /// - Throws: ``GatewayError`` if the server already ran: a server runs once.
    func start(group: ServiceGroup) async throws(GatewayError) {
        guard case .idle = phase else {
            throw .internalError("the gateway server has already been started; create a new GatewayServer")
        }
        phase = .running(group)
        if shutdownRequested {
            await group.triggerGracefulShutdown()
        }
    }

    /// Records that a listener is accepting connections on `port`; once both are, the server is ready.
    ///
    /// Hummingbird awaits this before accepting connections, so it only resumes waiters and never runs their code.
    /// The listeners not bound yet.
    var unboundListeners: Set<GatewayListener> {
        var unbound: Set<GatewayListener> = []
        if publicPort == nil { unbound.insert(.public) }
        if adminPort == nil { unbound.insert(.admin) }
        return unbound
    }

    func bound(_ listener: GatewayListener, port: Int) {
        switch listener {
        case .public: publicPort = port
        case .admin: adminPort = port
        }
        guard readiness == nil, let publicPort, let adminPort else { return }
        let ports = BoundPorts(publicPort: publicPort, adminPort: adminPort)
        readiness = .success(ports)
        for waiter in waiters { waiter.resume(returning: ports) }
        waiters.removeAll()
    }

    /// Records the end of the run; anyone still waiting for readiness gets an error.
    func finish(error: (any Error)?) {
        phase = .finished
        if readiness == nil {
            let reason =
                error.map { "the gateway server stopped before it was ready: \($0)" }
                ?? "the gateway server stopped before it was ready"
            let failure = GatewayError.serviceUnavailable(reason)
            readiness = .failure(failure)
            for waiter in waiters { waiter.resume(throwing: failure) }
            waiters.removeAll()
        }
    }

    // MARK: - Requests

    /// Waits until both listeners are bound.
    ///
    /// - Throws: ``GatewayError`` if the server stops (or fails to bind) before it is ready.
    func waitUntilReady() async throws -> BoundPorts {
        if let readiness { return try readiness.get() }
        return try await withCheckedThrowingContinuation { waiters.append($0) }
    }

    /// Asks the running server to shut down gracefully, or remembers the request until it starts.
    func requestShutdown() async {
        shutdownRequested = true
        if case .running(let group) = phase {
            await group.triggerGracefulShutdown()
        }
    }
}
