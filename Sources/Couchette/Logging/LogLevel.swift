/// How severe a log message is, from the chattiest (``debug``) to the most serious (``error``).
///
/// A logger with level `L` receives every message whose level is `>= L`; ``none`` is above every message
/// level, so setting a logger to `.none` silences it. Messages are never logged *at* `.none`.
///
/// ```swift
/// Database.log.console.level = .verbose      // verbose, info, warning and error
/// #expect(LogLevel.warning > .info)
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public enum LogLevel: UInt8, Sendable, Comparable {
    /// Internal detail useful when debugging Couchette itself.
    case debug
    /// Detailed progress, e.g. each replicated revision.
    case verbose
    /// Notable events: a database opened, a replicator started or stopped.
    case info
    /// Something unexpected that Couchette recovered from.
    case warning
    /// An operation failed.
    case error
    /// Not a message level: a logger set to `.none` logs nothing.
    case none

    /// Orders levels by severity (`debug < verbose < info < warning < error < none`).
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The upper-case name written in log lines, e.g. `WARNING`.
    var label: String {
        switch self {
        case .debug: "DEBUG"
        case .verbose: "VERBOSE"
        case .info: "INFO"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .none: "NONE"
        }
    }
}
