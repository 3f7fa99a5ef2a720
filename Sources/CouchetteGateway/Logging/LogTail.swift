import Foundation
import Logging
import Synchronization

// MARK: - LogTail

/// The gateway's most recent log lines, numbered, for `GET /_logging/tail` (the Admin UI's log view): every line the
/// gateway's loggers write also lands here, the oldest dropped past ``capacity``.
///
/// ```swift
/// let logger = tail.tee(Logger(label: "couchette.gateway"))
/// logger.info("CRUD: Stored doc \"a\"")
/// tail.lines(after: 0).last?.message   // "CRUD: Stored doc \"a\""
/// ```
public final class LogTail: Sendable {
    /// One line.
    public struct Line: Sendable, Equatable {
        /// 1 for the first line written, then one more each line.
        public var number: Int
        /// When it was written.
        public var date: Date
        /// Its level.
        public var level: Logger.Level
        /// Its text, which starts with its log key for keyed lines (`CRUD: …`).
        public var message: String

        /// The key the line starts with (`CRUD` for `CRUD: Stored doc …`), nil when it has none.
        public var key: String? {
            guard let colon = message.firstIndex(of: ":") else { return nil }
            let key = message[..<colon]
            return !key.isEmpty && key.allSatisfy({ $0.isLetter || $0 == "+" }) ? String(key) : nil
        }
    }

    /// The most lines kept.
    public let capacity: Int
    private let state = Mutex<(lines: [Line], next: Int)>(([], 1))

    /// Creates an empty tail.
    public init(capacity: Int = 2_000) {
        self.capacity = max(1, capacity)
    }

    /// `logger` writing its lines here too: what it writes, and its `info` lines even when it writes only warnings
    /// and errors (keyed lines are `info`).
    public func tee(_ logger: Logger) -> Logger {
        var teed = logger
        teed.handler = MultiplexLogHandler([logger.handler, Handler(tail: self, logLevel: min(logger.logLevel, .info))])
        return teed
    }

    /// Adds a line.
    func append(level: Logger.Level, message: String) {
        state.withLock { state in
            state.lines.append(Line(number: state.next, date: Date(), level: level, message: message))
            state.next += 1
            if state.lines.count > capacity { state.lines.removeFirst(state.lines.count - capacity) }
        }
    }

    /// The lines numbered after `number`, oldest first, at most `limit` (the newest ones).
    public func lines(after number: Int, limit: Int = 1_000) -> [Line] {
        state.withLock { state in Array(state.lines.lazy.filter { $0.number > number }.suffix(limit)) }
    }

    /// The number of the last line written (0 before any).
    public var lastNumber: Int { state.withLock { $0.next - 1 } }

    /// The log handler that appends to the tail.
    struct Handler: LogHandler {
        let tail: LogTail
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        init(tail: LogTail, logLevel: Logger.Level) {
            self.tail = tail
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            tail.append(level: event.level, message: "\(event.message)")
        }
    }
}
