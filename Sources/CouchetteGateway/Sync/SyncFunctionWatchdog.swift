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
///
/// One entry into JavaScript runs a batch of calls; each check reads which one runs (the `i` of the progress
/// object the entry point updates, see ``SyncFunctionScript``) and starts counting afresh when it changed, so
/// the time limit applies to each call, give or take one interval, and a stop names the call it stopped.
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
    /// The progress object of the batch entry point (its address), whose `i` is the index of the running call.
    private let progress = Atomic<Int>(0)
    /// The index of the call running at the last check.
    private let lastCall = Atomic<Int>(0)
    /// The index of the call that was stopped.
    private let stopped = Atomic<Int>(0)
    private let timeLimitNanoseconds: Int64
    private let memoryLimit: Double

    /// Creates a watchdog.
    ///
    /// - Parameters:
    ///   - timeLimit: The CPU time one call may take.
    ///   - memoryLimit: The bytes the context group's heap may hold during a call.
    init(timeLimit: Duration, memoryLimit: Int) {
        timeLimitNanoseconds = max(1_000_000, timeLimit.nanoseconds)
        self.memoryLimit = Double(memoryLimit)
    }

    /// Why the last call was stopped, if it was.
    var stopReason: Stop { Stop(rawValue: stop.load(ordering: .acquiring)) ?? .none }

    /// Whether the last call (or the compilation) was stopped.
    var hasFired: Bool { stopReason != .none }

    /// The index in its batch of the call that was stopped (0 when nothing was).
    var stoppedCall: Int { stopped.load(ordering: .acquiring) }

    /// Starts a new batch: forgets an earlier stop and starts counting CPU time.
    func reset() {
        stop.store(Stop.none.rawValue, ordering: .releasing)
        checks.store(0, ordering: .releasing)
        lastCall.store(0, ordering: .releasing)
        stopped.store(0, ordering: .releasing)
    }

    /// Reads the running call's index from `object`'s `i` at each check. The object must stay alive (protected)
    /// as long as the watchdog is installed.
    func watch(progress object: JSObjectRef) {
        progress.store(Int(bitPattern: UnsafeRawPointer(object)), ordering: .releasing)
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
        let call = context.map(runningCall) ?? 0
        if call != lastCall.load(ordering: .acquiring) {
            lastCall.store(call, ordering: .releasing)
            checks.store(0, ordering: .releasing)
        }
        let made = checks.add(1, ordering: .acquiringAndReleasing).newValue
        if Double(made) * interval * 1e9 >= Double(timeLimitNanoseconds) - 1 {
            stopped.store(call, ordering: .releasing)
            stop.store(Stop.timeLimit.rawValue, ordering: .releasing)
            return true
        }
        if let context, Self.heapBytes(context) > memoryLimit {
            stopped.store(call, ordering: .releasing)
            stop.store(Stop.memoryLimit.rawValue, ordering: .releasing)
            return true
        }
        if let address = UnsafeRawPointer(bitPattern: group.load(ordering: .acquiring)) {
            arm(JSContextGroupRef(address))
        }
        return false
    }

    /// The progress object's `i`: the index of the call running; 0 before the entry point sets it.
    private func runningCall(_ context: JSContextRef) -> Int {
        guard let address = UnsafeRawPointer(bitPattern: progress.load(ordering: .acquiring)) else { return 0 }
        let object = JSObjectRef(address)
        let value = JavaScriptText.withString("i") { JSObjectGetProperty(context, object, $0, nil) }
        guard let value, JSValueIsNumber(context, value) else { return 0 }
        let number = JSValueToNumber(context, value, nil)
        return number.isFinite && number >= 0 && number < Double(Int32.max) ? Int(number) : 0
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
