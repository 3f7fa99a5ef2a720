import Foundation

// MARK: - Blocking

/// Runs async work to its end from a synchronous command.
enum Blocking {
    static func run(_ work: @escaping @Sendable () async throws -> Void) -> Result<Void, any Error> {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        Task {
            do { try await work() } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return box.result
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Result<Void, any Error> = .success(())
        var result: Result<Void, any Error> { lock.withLock { stored } }
        func set(_ result: Result<Void, any Error>) { lock.withLock { stored = result } }
    }
}
