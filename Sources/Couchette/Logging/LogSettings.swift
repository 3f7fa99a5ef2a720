/// Everything that decides whether a message is wanted, kept behind one lock shared by ``Log``,
/// ``ConsoleLogger`` and ``FileLogger`` so that deciding costs one lock acquisition.
struct LogSettings: Sendable {
    /// ``ConsoleLogger/level``.
    var consoleLevel: LogLevel = .warning
    /// ``ConsoleLogger/domains``.
    var consoleDomains: LogDomains = .all
    /// ``FileLogger/level``.
    var fileLevel: LogLevel = .info
    /// ``FileLogger/config``.
    var fileConfig: LogFileConfiguration?
    /// Incremented whenever ``fileConfig`` is set, so the file writer knows to reopen.
    var fileGeneration: UInt64 = 0
    /// ``Log/custom``.
    var custom: (any CustomLogger)?
}
