import Foundation

/// Couchette's logging: a console logger, a file logger and an optional custom logger, all fed by the same
/// messages. Use the shared instance, `Database.log` (``Log/shared``).
///
/// ```swift
/// Database.log.console.level = .verbose; Database.log.console.domains = [.replicator, .network]
/// Database.log.file.config = LogFileConfiguration(directory: "/var/log/todo")
/// Database.log.custom = SwiftLogBridge(Logger(label: "todo"))
/// ```
///
/// Each logger filters on its own: the console by level and ``LogDomains``, the file and custom loggers by
/// level only. Loggers are called synchronously on the logging thread; every property is thread-safe.
///
/// See spec `lite-api.md` §9 "Logging".
public final class Log: Sendable {
    /// The instance Couchette logs to, also known as `Database.log`.
    public static let shared = Log()

    /// The standard-error logger: ``LogLevel/warning`` and above, all domains, by default.
    public let console: ConsoleLogger

    /// The file logger: off until its ``FileLogger/config`` is set.
    public let file: FileLogger

    /// The settings of all three loggers behind one lock, so that deciding whether a message is wanted costs
    /// a single lock acquisition.
    private let settings: LoggingLock<LogSettings>

    /// The time stamped on messages.
    private let clock: @Sendable () -> Date

    /// A log separate from ``shared``, with the default settings; for tests.
    ///
    /// - Parameters:
    ///   - consoleOutput: Receives each console line, without newline; by default written to standard error.
    ///   - clock: The time stamped on messages; by default the current time.
    init(
        consoleOutput: @escaping @Sendable (String) -> Void = { ConsoleLogger.writeToStandardError($0) },
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        let settings = LoggingLock(LogSettings())
        self.settings = settings
        self.clock = clock
        console = ConsoleLogger(settings: settings, output: consoleOutput)
        file = FileLogger(settings: settings)
    }

    /// A logger that receives every message at or above its ``CustomLogger/level``, from every domain;
    /// `nil` (the default) for none.
    public var custom: (any CustomLogger)? {
        get { settings.withLock { $0.custom } }
        set { settings.withLock { $0.custom = newValue } }
    }

    // MARK: - Internal entry point

    /// Logs a message: the one entry point the rest of Couchette uses.
    ///
    /// Cheap when nobody wants the message: after one lock acquisition (and reading the custom logger's
    /// level) it returns without evaluating `message`. When some logger wants it, `message` is evaluated
    /// exactly once.
    ///
    /// ```swift
    /// Log.shared.emit(.info, .database, "Opened database \(name)")
    /// Log.shared.emit(.debug, .replicator, "Pulled \(docID) rev \(revID)")
    /// ```
    ///
    /// - Important: No document bodies at default levels. Messages at ``LogLevel/info`` or above (what the
    ///   console and file loggers show by default) must not contain document bodies, property values or
    ///   secrets; document IDs and revision IDs are fine. Bodies may appear only at `.debug` and `.verbose`.
    ///   Secrets (passwords, session tokens, cookies, encryption keys) must never be logged, at any level.
    ///
    /// - Parameters:
    ///   - level: The message's level; messages at ``LogLevel/none`` are ignored.
    ///   - domain: The area of Couchette the message comes from.
    ///   - message: The text, built only if some logger wants it.
    func emit(_ level: LogLevel, _ domain: LogDomain, _ message: @autoclosure () -> String) {
        let targets = self.targets(level, domain)
        guard targets.console || targets.file || targets.custom != nil else { return }
        let text = message()
        let date = clock()
        if targets.console { console.write(date: date, level: level, domain: domain, message: text) }
        if targets.file { file.write(date: date, level: level, domain: domain, message: text) }
        targets.custom?.log(level: level, domain: domain, message: text)
    }

    /// Whether any logger wants messages at `level` from `domain`: for callers that must do work beyond
    /// building the string (e.g. encode a body at `.debug`) before calling ``emit(_:_:_:)``.
    func isEnabled(_ level: LogLevel, _ domain: LogDomain) -> Bool {
        let targets = self.targets(level, domain)
        return targets.console || targets.file || targets.custom != nil
    }

    /// ``emit(_:_:_:)`` at ``LogLevel/debug``.
    func debug(_ domain: LogDomain, _ message: @autoclosure () -> String) {
        emit(.debug, domain, message())
    }

    /// ``emit(_:_:_:)`` at ``LogLevel/verbose``.
    func verbose(_ domain: LogDomain, _ message: @autoclosure () -> String) {
        emit(.verbose, domain, message())
    }

    /// ``emit(_:_:_:)`` at ``LogLevel/info``. No document bodies or secrets.
    func info(_ domain: LogDomain, _ message: @autoclosure () -> String) {
        emit(.info, domain, message())
    }

    /// ``emit(_:_:_:)`` at ``LogLevel/warning``. No document bodies or secrets.
    func warning(_ domain: LogDomain, _ message: @autoclosure () -> String) {
        emit(.warning, domain, message())
    }

    /// ``emit(_:_:_:)`` at ``LogLevel/error``. No document bodies or secrets.
    func error(_ domain: LogDomain, _ message: @autoclosure () -> String) {
        emit(.error, domain, message())
    }

    // MARK: - Private

    /// Which loggers want a message; `custom` is the custom logger if it wants it.
    private func targets(
        _ level: LogLevel,
        _ domain: LogDomain
    ) -> (console: Bool, file: Bool, custom: (any CustomLogger)?) {
        guard level < .none else { return (false, false, nil) }
        let (console, file, custom) = settings.withLock { settings in
            (
                level >= settings.consoleLevel && settings.consoleDomains.includes(domain),
                settings.fileConfig != nil && level >= settings.fileLevel,
                settings.custom
            )
        }
        // The custom logger's level is read outside the lock: it is the caller's code.
        guard let custom, level >= custom.level else { return (console, file, nil) }
        return (console, file, custom)
    }
}
