import Logging

// MARK: - EndedBeforeRequestLogHandler

/// The log handler a guarded connection's Hummingbird channel logs through (``GuardedHTTPChannel``): it passes every
/// message on, except that it says at `debug` level what Hummingbird's WebSocket channel logs as an error when a
/// connection ends before any request reached its upgrader ("Error handling upgrade result", `Inappropriate
/// operation for state`). That happens whenever a gate of ours answers the connection itself — the `401` a Couchbase
/// Lite client gets before it sends its credentials, a malformed request refused — or a client leaves at once:
/// nothing went wrong, and an error line for each would bury the real ones.
struct EndedBeforeRequestLogHandler: LogHandler {
    var base: any LogHandler

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.level == .error, Self.isEndedBeforeRequest(event.message, event.metadata) {
            guard base.logLevel <= .debug else { return }
            event.level = .debug
        }
        base.log(event: event)
    }

    /// Whether a message is Hummingbird's report of a connection that ended before its upgrade was negotiated.
    static func isEndedBeforeRequest(_ message: Logger.Message, _ metadata: Logger.Metadata?) -> Bool {
        guard message.description == "Error handling upgrade result", case .string(let type)? = metadata?["error.type"]
        else { return false }
        return type.contains("Inappropriate operation for state")
    }

    /// `logger` with its handler wrapped.
    static func wrapping(_ logger: Logger) -> Logger {
        var wrapped = Logger(label: logger.label) { _ in EndedBeforeRequestLogHandler(base: logger.handler) }
        wrapped.logLevel = logger.logLevel
        return wrapped
    }
}
