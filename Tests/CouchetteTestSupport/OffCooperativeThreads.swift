import Foundation

/// Runs blocking work (waiting for another process, a server starting) on a thread of its own and waits for it
/// without holding the calling task's thread: Swift has as many cooperative threads as cores (and Dispatch's global
/// queues as few on Linux), so a test blocking one stalls every other test's tasks meanwhile.
public func offCooperativeThreads<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
