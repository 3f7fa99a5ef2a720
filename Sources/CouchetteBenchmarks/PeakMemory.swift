import Foundation

/// The process's peak resident set size, from `/proc/self/status` (`VmHWM`), reset through
/// `/proc/self/clear_refs`.
///
/// ```swift
/// let (result, megabytes) = try await PeakMemory.rise { try await replicator.run() }
/// ```
enum PeakMemory {
    static func reset() -> Bool {
        FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs")
            && (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
    }

    /// A memory figure of `/proc/self/status` in MB: `VmHWM` (peak) or `VmRSS` (current).
    static func megabytes(field: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(field):") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// Runs `body` and returns how many MB the peak resident memory rose above the resident memory at the start;
    /// nil where it cannot be measured.
    static func rise<T>(_ body: () async throws -> T) async rethrows -> (T, Double?) {
        guard reset() else { return (try await body(), nil) }
        let before = megabytes(field: "VmRSS")
        let result = try await body()
        return (result, max(megabytes(field: "VmHWM") - before, 0.01))
    }
}
