import ArgumentParser
import Foundation

// MARK: - LogcatCommand

/// `couchette logcat DIR|FILE…`: prints the library's log files (``FileLogger``'s plain text or JSON lines),
/// oldest first (`couchette.log.2`, `.1`, then `couchette.log`), keeping the lines at or above `--level` and
/// containing `--filter`.
struct LogcatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logcat", abstract: "Print the library's log files (a log folder or files), filtered by level and text.")

    @Argument(help: "A log folder (LogFileConfiguration.directory) or log files.")
    var paths: [String]

    @Option(help: "The lowest level shown: debug, verbose, info, warning or error.")
    var level = "debug"

    @Option(help: "Show only lines containing this text.")
    var filter: String?

    static let levels = ["debug", "verbose", "info", "warning", "error"]

    func run() throws {
        try reportingErrors {
            guard let minimum = Self.levels.firstIndex(of: level.lowercased()) else {
                throw CLIError.usage("--level takes one of \(Self.levels.joined(separator: ", ")).")
            }
            var files: [String] = []
            for path in paths {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    throw CLIError.notFound("No log file or folder at \(path)")
                }
                files += isDirectory.boolValue ? Self.logFiles(in: path) : [path]
            }
            var shown = ""
            for file in files {
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
                for line in text.split(separator: "\n") {
                    guard Self.level(of: line).map({ $0 >= minimum }) ?? true else { continue }
                    if let filter, !line.contains(filter) { continue }
                    shown += line + "\n"
                }
            }
            FileHandleOutput.standardOutput(shown)
        }
    }

    /// The log files of a folder, oldest first: the rotated `couchette.log.N` from the highest N, then the current.
    static func logFiles(in directory: String) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            $0.hasPrefix("couchette.log") || $0.hasPrefix("couchette.jsonl")
        }
        func rotation(_ name: String) -> Int {
            name.split(separator: ".").last.flatMap { Int($0) } ?? 0
        }
        return names.sorted { (rotation($0), $1) > (rotation($1), $0) }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// The level index of a plain-text (`… [domain] WARNING: …`) or JSON (`"level":"warning"`) line.
    static func level(of line: Substring) -> Int? {
        if line.hasPrefix("{"), let range = line.range(of: #""level":""#) {
            let rest = line[range.upperBound...]
            return levels.firstIndex(of: String(rest.prefix { $0 != "\"" }))
        }
        guard let bracket = line.range(of: "] ") else { return nil }
        let word = line[bracket.upperBound...].prefix { $0 != ":" }
        return levels.firstIndex(of: word.lowercased())
    }
}
