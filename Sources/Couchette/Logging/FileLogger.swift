import Foundation

/// Writes log messages to files, with rotation; off until ``config`` is set.
///
/// Reach it through ``Log/file`` (`Database.log.file`). Messages from every ``LogDomain`` at ``level`` or
/// above are written; see ``LogFileConfiguration`` for the file names, rotation and formats. Writes are
/// serialized by a lock, and each line is handed to the OS before the logging call returns.
///
/// ```swift
/// Database.log.file.config = LogFileConfiguration(directory: "/var/log/todo")
/// Database.log.file.level = .verbose
/// Database.log.file.config = nil      // stop writing
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public final class FileLogger: Sendable {
    private let settings: LoggingLock<LogSettings>
    private let writer = LoggingLock(LogFileWriter())

    /// A file logger reading its settings from `settings`, shared with its ``Log``.
    init(settings: LoggingLock<LogSettings>) {
        self.settings = settings
    }

    /// Where and how to write, or `nil` (the default) to write nothing.
    ///
    /// Setting it closes the current file; the next message opens the file of the new configuration.
    public var config: LogFileConfiguration? {
        get { settings.withLock { $0.fileConfig } }
        set {
            settings.withLock {
                $0.fileConfig = newValue
                $0.fileGeneration &+= 1
            }
            writer.withLock { $0.close() }
        }
    }

    /// The lowest level written. Default ``LogLevel/info``; `.none` writes nothing. Has no effect while
    /// ``config`` is `nil`.
    public var level: LogLevel {
        get { settings.withLock { $0.fileLevel } }
        set { settings.withLock { $0.fileLevel = newValue } }
    }

    /// Formats and appends one message according to the current ``config`` (nothing if it is `nil`).
    /// The caller has already checked the level.
    func write(date: Date, level: LogLevel, domain: LogDomain, message: String) {
        writer.withLock { writer in
            let (config, generation) = settings.withLock { ($0.fileConfig, $0.fileGeneration) }
            guard let config else {
                writer.close()
                return
            }
            let line =
                config.usePlainText
                ? LogLineFormatter.plainText(date: date, level: level, domain: domain, message: message)
                : LogLineFormatter.json(date: date, level: level, domain: domain, message: message)
            writer.write(line, config: config, generation: generation)
        }
    }
}
