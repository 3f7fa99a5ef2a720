import Logging

/// A ``CustomLogger`` that forwards Couchette's messages to a swift-log `Logger`.
///
/// Levels map as `debug → .trace`, `verbose → .debug`, `info → .info`, `warning → .warning`,
/// `error → .error`. Each message carries the metadata `domain` (e.g. `"replicator"`) and the source
/// `"Couchette"`. Messages pass two filters: the bridge's ``level`` (applied by ``Log``) and the swift-log
/// logger's own `logLevel`.
///
/// ```swift
/// import Logging
/// Database.log.custom = SwiftLogBridge(Logger(label: "todo"))
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public struct SwiftLogBridge: CustomLogger {
    /// The lowest Couchette level forwarded. Default ``LogLevel/info``.
    public let level: LogLevel

    private let logger: Logging.Logger

    /// A bridge to `logger`.
    ///
    /// - Parameters:
    ///   - logger: The swift-log logger that receives the messages.
    ///   - level: The lowest Couchette level forwarded. Default ``LogLevel/info``.
    public init(_ logger: Logging.Logger, level: LogLevel = .info) {
        self.logger = logger
        self.level = level
    }

    /// Forwards one message to the swift-log logger, at the mapped level with `domain` metadata.
    ///
    /// - Parameters:
    ///   - level: The message's level; ``LogLevel/none`` is not forwarded.
    ///   - domain: The area of Couchette the message comes from, sent as the `domain` metadata.
    ///   - message: The text of the message.
    public func log(level: LogLevel, domain: LogDomain, message: String) {
        guard let swiftLogLevel = Self.swiftLogLevel(level) else { return }
        logger.log(
            level: swiftLogLevel,
            Logging.Logger.Message(stringLiteral: message),
            metadata: ["domain": .string(domain.name)],
            source: "Couchette"
        )
    }

    /// The swift-log level for a Couchette level, or `nil` for ``LogLevel/none``.
    static func swiftLogLevel(_ level: LogLevel) -> Logging.Logger.Level? {
        switch level {
        case .debug: .trace
        case .verbose: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        case .none: nil
        }
    }
}
