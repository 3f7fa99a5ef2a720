import CJavaScriptCore
import Synchronization

// MARK: - SyncFunctionWatchdog

/// Stops a sync function call that runs past its time limit and remembers that it did, so that the runtime can
/// tell a time-out from an exception (spec: sync-function.md §4, "JS sync function timed out").
///
/// JavaScriptCore calls ``shouldTerminate`` when a context group's execution time limit
/// (`JSContextGroupSetExecutionTimeLimit`) expires; terminating raises an exception that JavaScript cannot catch.
final class SyncFunctionWatchdog: Sendable {
    private let fired = Atomic<Bool>(false)

    /// Whether the limit expired since the last ``reset()``.
    var hasFired: Bool { fired.load(ordering: .acquiring) }

    /// Forgets an earlier expiry, before a new call.
    func reset() { fired.store(false, ordering: .releasing) }

    /// Installs the limit on a context group. The group must not outlive the watchdog.
    ///
    /// - Parameters:
    ///   - group: The group whose calls are limited.
    ///   - seconds: The limit per call (each entry into JavaScript starts a new count).
    func install(on group: JSContextGroupRef, seconds: Double) {
        JSContextGroupSetExecutionTimeLimit(
            group, seconds, Self.shouldTerminate, Unmanaged.passUnretained(self).toOpaque())
    }

    /// JavaScriptCore's callback: records the expiry and asks for termination.
    private static let shouldTerminate: JSShouldTerminateCallback = { _, info in
        guard let info else { return true }
        Unmanaged<SyncFunctionWatchdog>.fromOpaque(info).takeUnretainedValue().fired.store(true, ordering: .releasing)
        return true
    }
}
