import Foundation

/// Writes log messages to standard error, one line each:
/// `2026-11-22T01:02:03.456Z Couchette [database] WARNING: message`.
///
/// Reach it through ``Log/console`` (`Database.log.console`). By default it shows warnings and errors from
/// every domain.
///
/// ```swift
/// Database.log.console.level = .verbose                   // 1.x: enableLogging("Sync")
/// Database.log.console.domains = [.replicator, .network]
/// Database.log.console.level = .none                      // silence it
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public final class ConsoleLogger: Sendable {
    private let settings: LoggingLock<LogSettings>
    private let output: @Sendable (String) -> Void

    /// A console logger reading its settings from `settings` (shared with its ``Log``) and handing each
    /// formatted line, without newline, to `output`.
    init(settings: LoggingLock<LogSettings>, output: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.output = output
    }

    /// The lowest level shown. Default ``LogLevel/warning``; `.none` shows nothing.
    public var level: LogLevel {
        get { settings.withLock { $0.consoleLevel } }
        set { settings.withLock { $0.consoleLevel = newValue } }
    }

    /// The domains shown. Default ``LogDomains/all``.
    public var domains: LogDomains {
        get { settings.withLock { $0.consoleDomains } }
        set { settings.withLock { $0.consoleDomains = newValue } }
    }

    /// Formats one message and writes it. The caller has already checked level and domain.
    func write(date: Date, level: LogLevel, domain: LogDomain, message: String) {
        output(LogLineFormatter.plainText(date: date, level: level, domain: domain, message: message))
    }

    /// The default output: `line` and a newline, in one `write` to standard error.
    static func writeToStandardError(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }
}
