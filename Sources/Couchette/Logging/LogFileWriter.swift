import Foundation

/// The open log file of a ``FileLogger``, with its size and rotation. Only used under the logger's lock.
///
/// I/O errors are swallowed (there is nowhere to report them): the line is dropped, the file closed, and the
/// next line tries to reopen it. `FileHandle` writes go straight to the file descriptor, so every line is on
/// disk (in the OS cache) when ``write(_:config:generation:)`` returns.
struct LogFileWriter {
    private var handle: FileHandle?
    private var size: UInt64 = 0
    /// The ``LogSettings/fileGeneration`` the open file belongs to.
    private var generation: UInt64 = 0

    /// Appends `line` and a newline to the current file, rotating first if the file would exceed
    /// ``LogFileConfiguration/maxSize``.
    ///
    /// - Parameters:
    ///   - line: The formatted line, without newline.
    ///   - config: The configuration in force.
    ///   - generation: Its ``LogSettings/fileGeneration``; a change closes the previous file first.
    mutating func write(_ line: String, config: LogFileConfiguration, generation: UInt64) {
        if generation != self.generation {
            close()
            self.generation = generation
        }
        let data = Data((line + "\n").utf8)
        do {
            if handle == nil { try open(config) }
            if size > 0, size + UInt64(data.count) > config.maxSize {
                try rotate(config)
            }
            try handle?.write(contentsOf: data)
            size += UInt64(data.count)
        } catch {
            close()
        }
    }

    /// Closes the current file, if any. The next ``write(_:config:generation:)`` reopens it.
    mutating func close() {
        try? handle?.close()
        handle = nil
        size = 0
    }

    // MARK: - Private

    private mutating func open(_ config: LogFileConfiguration) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
        let path = Self.path(config, number: 0)
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        size = try handle.seekToEnd()
        self.handle = handle
    }

    /// Shifts `name.k` to `name.k+1` and `name` to `name.1`, deleting whatever would be numbered above
    /// `maxRotateCount`, then opens a fresh file.
    private mutating func rotate(_ config: LogFileConfiguration) throws {
        close()
        let manager = FileManager.default
        let keep = max(config.maxRotateCount, 0)
        let prefix = config.fileName + "."
        for name in (try? manager.contentsOfDirectory(atPath: config.directory)) ?? [] where name.hasPrefix(prefix) {
            if let number = Int(name.dropFirst(prefix.count)), number >= keep {
                try? manager.removeItem(atPath: Self.path(config, number: number))
            }
        }
        if keep > 0 {
            for number in stride(from: keep - 1, through: 0, by: -1) {
                let source = Self.path(config, number: number)
                if manager.fileExists(atPath: source) {
                    try manager.moveItem(atPath: source, toPath: Self.path(config, number: number + 1))
                }
            }
        } else {
            try? manager.removeItem(atPath: Self.path(config, number: 0))
        }
        try open(config)
    }

    /// `directory/couchette.log` for number 0, `directory/couchette.log.N` otherwise.
    private static func path(_ config: LogFileConfiguration, number: Int) -> String {
        let name = number == 0 ? config.fileName : "\(config.fileName).\(number)"
        return URL(fileURLWithPath: config.directory).appendingPathComponent(name).path
    }
}
