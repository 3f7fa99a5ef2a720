import Logging

// MARK: - GatewayLog

/// Logging by Sync Gateway's log keys (`HTTP`, `CRUD`, `Auth`, `Changes`, …), following the run-time
/// ``LogSettings`` (`PUT /_logging` takes effect at once). Lines start with their key, as Sync Gateway's do.
///
/// ```swift
/// log(LogKeys.crud, "Stored doc \"list1\" / \"1-abc\"")   // CRUD: Stored doc "list1" / "1-abc"
/// ```
///
/// Messages must never contain secrets: passwords, `Authorization` headers, cookies or session IDs.
public struct GatewayLog: Sendable {
    /// Where lines go.
    public let logger: Logger
    /// Which keys are on, and the level.
    public let settings: LogSettings

    /// Creates a log.
    public init(logger: Logger, settings: LogSettings) {
        self.logger = logger
        self.settings = settings
    }

    /// Whether lines of `key` are written.
    public func isEnabled(_ key: String) -> Bool {
        settings.isEnabled(key) && settings.level <= .info
    }

    /// Writes `message` under `key` when that key is enabled.
    public func callAsFunction(_ key: String, _ message: @autoclosure () -> String) {
        guard isEnabled(key) else { return }
        logger.info("\(key): \(message())")
    }
}
