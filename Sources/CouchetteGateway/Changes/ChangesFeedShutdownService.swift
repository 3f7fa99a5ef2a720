import ServiceLifecycle

// MARK: - ChangesFeedShutdownService

/// Ends every open `_changes` feed when the server shuts down gracefully.
///
/// Hummingbird's graceful shutdown waits for in-flight responses, and a continuous feed never finishes on its own.
/// This service waits for the shutdown signal and then closes each database's ``ChangeNotifier``, so waiting feeds
/// end at once and the listeners can finish. In ``GatewayServer``'s service group it comes after the listeners:
/// services are shut down in reverse order, so it runs before them.
///
/// ```swift
/// ServiceGroup(services: [publicApplication, adminApplication, ChangesFeedShutdownService(registry: registry)], …)
/// ```
struct ChangesFeedShutdownService: Service {
    /// The databases whose feeds to end.
    let registry: DatabaseRegistry

    /// Waits for graceful shutdown (or cancellation), then closes every database's change notifier.
    func run() async throws {
        try? await gracefulShutdown()
        for database in await registry.all {
            database.changeNotifier.close()
        }
    }
}
