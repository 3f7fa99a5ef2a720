import Synchronization

// MARK: - PreviewConsole

/// Collects the `console` lines of the preview's calls, one call at a time.
final class PreviewConsole: Sendable {
    private let lines = Mutex<[(level: String, message: String)]>([])

    /// The console to give the function.
    var console: SyncFunctionConsole {
        SyncFunctionConsole { [self] level, message in self.lines.withLock { $0.append((level, message)) } }
    }

    /// Forgets the lines collected so far.
    func clear() { lines.withLock { $0.removeAll() } }

    /// The lines collected since ``clear()``.
    func take() -> [(level: String, message: String)] { lines.withLock { $0 } }
}
