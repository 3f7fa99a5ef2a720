import Foundation

// MARK: - ProgressReporter

/// Progress on standard error: on a terminal a bar with counts, bytes, rate and ETA redrawn in place (at most ten
/// times a second), otherwise a plain line per tenth of the work.
final class ProgressReporter: @unchecked Sendable {
    private let isTerminal: Bool
    /// What is counted: "changes", "documents".
    private let unit: String
    private let started = Date()
    private let lock = NSLock()
    private var lastDecile = -1
    private var lastDrawn = Date.distantPast
    private var drew = false

    init(isTerminal: Bool = isatty(STDERR_FILENO) != 0, unit: String = "changes") {
        self.isTerminal = isTerminal
        self.unit = unit
    }

    /// Reports `completed` of `total` items, and the bytes moved so far when known. Cheap when nothing is drawn
    /// (called once per document): the text is made only for a redraw or a new tenth.
    func show(_ completed: UInt64, of total: UInt64, bytes: UInt64? = nil) {
        lock.withLock {
            guard total > 0 else { return }
            let fraction = min(1, Double(completed) / Double(total))
            let now = Date()
            if isTerminal {
                guard completed >= total || now.timeIntervalSince(lastDrawn) >= 0.1 else { return }
                lastDrawn = now
            } else {
                let decile = Int(fraction * 10)
                guard decile > lastDecile else { return }
                lastDecile = decile
            }
            let elapsed = now.timeIntervalSince(started)
            let rate = elapsed > 0 ? Double(completed) / elapsed : 0
            let remaining = rate > 0 ? Double(total - min(completed, total)) / rate : 0
            let size = bytes.map { "  " + Self.size($0) } ?? ""
            if isTerminal {
                let width = 30
                let filled = Int(fraction * Double(width))
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                FileHandleOutput.standardError(
                    "\r\(bar) \(completed)/\(total) \(unit)\(size)  \(Int(rate))/s  ETA \(Int(remaining.rounded()))s ")
                drew = true
            } else {
                FileHandleOutput.standardError("progress: \(completed)/\(total) \(unit)\(size) (\(lastDecile * 10)%)\n")
            }
        }
    }

    /// `812 B`, `12.4 KB`, `3.1 MB`, `1.2 GB` (powers of 1,000, as `ls -h --si`).
    static func size(_ bytes: UInt64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(Double(Int(value * 10)) / 10) \(units[unit])"
    }

    /// Ends the bar's line.
    func finish() {
        lock.withLock { if drew { FileHandleOutput.standardError("\n") } }
    }
}
