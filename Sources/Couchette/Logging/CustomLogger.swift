/// Receives Couchette's log messages, in addition to the console and file loggers.
///
/// CBL calls this protocol `Logger`, which would clash with swift-log's `Logger`. Install one with
/// ``Log/custom``; ``SwiftLogBridge`` is a ready-made implementation that forwards to swift-log.
///
/// ```swift
/// struct PrintLogger: CustomLogger {
///     let level: LogLevel = .info
///     func log(level: LogLevel, domain: LogDomain, message: String) { print(level, domain, message) }
/// }
/// Database.log.custom = PrintLogger()
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public protocol CustomLogger: Sendable {
    /// The lowest level this logger wants: ``log(level:domain:message:)`` is only called for messages at this
    /// level or above. `.none` means no messages. Read on every message, so keep it cheap.
    var level: LogLevel { get }

    /// Receives one message. Called synchronously on the thread that logs, possibly from several threads at
    /// once, so it must be thread-safe and should return quickly.
    ///
    /// - Parameters:
    ///   - level: The message's level, never ``LogLevel/none`` and never below ``level``.
    ///   - domain: The area the message comes from.
    ///   - message: The text of the message, without timestamp, domain or level.
    func log(level: LogLevel, domain: LogDomain, message: String)
}
