/// Where and how ``FileLogger`` writes.
///
/// The logger writes one file, `couchette.log` (or `couchette.jsonl` when ``usePlainText`` is off), in
/// ``directory``, creating the directory if needed and appending to an existing file. When a line would take the
/// file past ``maxSize``, the file is rotated: `couchette.log` becomes `couchette.log.1`, `.1` becomes `.2`, and
/// so on; files numbered above ``maxRotateCount`` are deleted, so at most `maxRotateCount + 1` files exist.
///
/// ```swift
/// var config = LogFileConfiguration(directory: "/var/log/todo")
/// config.maxSize = 1024 * 1024
/// config.maxRotateCount = 3     // couchette.log, couchette.log.1 … couchette.log.3
/// Database.log.file.config = config
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public struct LogFileConfiguration: Sendable {
    /// The directory the log files are written to. Created (with intermediate directories) if missing.
    public let directory: String

    /// The size in bytes a log file may reach before it is rotated. Default 500 KiB.
    ///
    /// A line is never split: a single line longer than `maxSize` is written alone to a fresh file.
    public var maxSize: UInt64 = 500 * 1024

    /// How many rotated files (`couchette.log.1` … `couchette.log.N`) are kept besides the current one.
    /// Default 1; `0` keeps only the current file.
    public var maxRotateCount: Int = 1

    /// Whether lines are plain text (the default), like the console's
    /// `2026-11-22T01:02:03.456Z Couchette [database] WARNING: message`, written to `couchette.log`.
    ///
    /// When `false`, each line is a JSON object (JSON Lines) with `time`, `level`, `domain` and `message`,
    /// written to `couchette.jsonl`: CBL's binary format is not reproduced.
    public var usePlainText: Bool = true

    /// A configuration writing to `directory` with the default size, rotation and format.
    ///
    /// - Parameter directory: The directory for the log files; created when the first line is written.
    public init(directory: String) {
        self.directory = directory
    }

    /// The name of the current log file: `couchette.log`, or `couchette.jsonl` for JSON Lines.
    var fileName: String {
        usePlainText ? "couchette.log" : "couchette.jsonl"
    }
}
