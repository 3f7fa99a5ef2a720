import Synchronization

/// Values reported to a callback, in order, readable from any thread.
public final class Recorded<Value: Sendable>: Sendable {
    private let log = Mutex<[Value]>([])

    public init() {}

    /// Adds a value.
    public func append(_ value: Value) { log.withLock { $0.append(value) } }

    /// The values so far.
    public var values: [Value] { log.withLock { $0 } }
}
