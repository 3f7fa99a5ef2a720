import CJavaScriptCore
import Synchronization

// MARK: - SyncFunctionWatchdog

/// Stops a sync function call that runs past its time limit or grows its JavaScript heap past its memory limit,
/// and remembers why, so that the runtime can tell a time-out or an exhausted heap from an exception
/// (spec: sync-function.md §4, "JS sync function timed out").
///
/// JavaScriptCore calls ``shouldTerminate`` after ``checkInterval`` of CPU time a call spends in JavaScript
/// (`JSContextGroupSetExecutionTimeLimit`; declining, the callback sets the limit again, which restarts the
/// interval — JavaScriptCore allows that from the callback); the callback compares the
/// call's CPU time with the time limit and the context group's heap (`JSGetMemoryUsageStatistics`: heap plus the
/// extra memory of array buffers and strings) with the memory limit. Terminating raises an exception that
/// JavaScript cannot catch. A call allocates at most what it can in one interval beyond the limit before it stops.
final class SyncFunctionWatchdog: Sendable {
    /// Why a call was stopped.
    enum Stop: UInt8 {
        case none = 0
        case timeLimit = 1
        case memoryLimit = 2
    }

    /// How often, in CPU time, a running call is checked.
    static let checkInterval = 0.01

    private let stop = Atomic<UInt8>(Stop.none.rawValue)
    /// The context group the checks are installed on (its address), to install them again after each check.
    private let group = Atomic<Int>(0)
    /// Checks made during the current call: each comes after ``checkInterval`` of its CPU time (JavaScriptCore
    /// counts it from each entry into JavaScript), so no clock is read on a call's fast path.
    private let checks = Atomic<Int>(0)
    private let timeLimitNanoseconds: Int64
    private let memoryLimit: Double

    /// Creates a watchdog.
    ///
    /// - Parameters:
    ///   - timeLimit: The CPU time one call may take.
    ///   - memoryLimit: The bytes the context group's heap may hold during a call.
    init(timeLimit: Duration, memoryLimit: Int) {
        let components = timeLimit.components
        timeLimitNanoseconds = max(1_000_000, components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        self.memoryLimit = Double(memoryLimit)
    }

    /// Why the last call was stopped, if it was.
    var stopReason: Stop { Stop(rawValue: stop.load(ordering: .acquiring)) ?? .none }

    /// Whether the last call (or the compilation) was stopped.
    var hasFired: Bool { stopReason != .none }

    /// Starts a new call: forgets an earlier stop and starts counting CPU time.
    func reset() {
        stop.store(Stop.none.rawValue, ordering: .releasing)
        checks.store(0, ordering: .releasing)
    }

    /// Installs the checks on a context group. The group must not outlive the watchdog.
    func install(on group: JSContextGroupRef) {
        self.group.store(Int(bitPattern: UnsafeRawPointer(group)), ordering: .releasing)
        arm(group)
    }

    /// The interval between checks: ``checkInterval``, or the whole time limit when that is shorter.
    private var interval: Double {
        min(Self.checkInterval, Double(timeLimitNanoseconds) / 1e9)
    }

    private func arm(_ group: JSContextGroupRef) {
        JSContextGroupSetExecutionTimeLimit(group, interval, Self.shouldTerminate, Unmanaged.passUnretained(self).toOpaque())
    }

    /// JavaScriptCore's callback: stops the call once it is over a limit.
    private static let shouldTerminate: JSShouldTerminateCallback = { context, info in
        guard let info else { return true }
        let watchdog = Unmanaged<SyncFunctionWatchdog>.fromOpaque(info).takeUnretainedValue()
        return watchdog.check(context)
    }

    private func check(_ context: JSContextRef?) -> Bool {
        let made = checks.add(1, ordering: .acquiringAndReleasing).newValue
        if Double(made) * interval * 1e9 >= Double(timeLimitNanoseconds) - 1 {
            stop.store(Stop.timeLimit.rawValue, ordering: .releasing)
            return true
        }
        if let context, Self.heapBytes(context) > memoryLimit {
            stop.store(Stop.memoryLimit.rawValue, ordering: .releasing)
            return true
        }
        if let address = UnsafeRawPointer(bitPattern: group.load(ordering: .acquiring)) {
            arm(JSContextGroupRef(address))
        }
        return false
    }

    /// The heap and extra memory of the context's VM, in bytes.
    private static func heapBytes(_ context: JSContextRef) -> Double {
        guard let statistics = JSGetMemoryUsageStatistics(context) else { return 0 }
        var total = 0.0
        for name in ["heapSize", "extraMemorySize"] {
            let value = JavaScriptText.withString(name) { JSObjectGetProperty(context, statistics, $0, nil) }
            if let value { total += JSValueToNumber(context, value, nil) }
        }
        return total.isFinite ? total : 0
    }
}
