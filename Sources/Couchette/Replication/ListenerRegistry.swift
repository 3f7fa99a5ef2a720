import Synchronization

// MARK: - ListenerRegistry

/// Callbacks told of each new value, added and removed from any thread, as tokens or async streams.
final class ListenerRegistry<Value: Sendable>: Sendable {
    private let listeners = Mutex<(next: UInt64, byID: [UInt64: @Sendable (Value) -> Void])>((0, [:]))

    /// Calls `listener` with every value from now on, until the token is removed.
    func add(_ listener: @escaping @Sendable (Value) -> Void) -> ListenerToken {
        let id = listeners.withLock { listeners in
            listeners.next += 1
            listeners.byID[listeners.next] = listener
            return listeners.next
        }
        return ListenerToken(id: id) { [self] id in _ = listeners.withLock { $0.byID.removeValue(forKey: id) } }
    }

    /// Every value from now on, as `transform` makes it (nil skips it), until the consumer stops iterating.
    func stream<Output: Sendable>(_ transform: @escaping @Sendable (Value) -> Output?) -> AsyncStream<Output> {
        AsyncStream { continuation in
            let token = add { value in
                if let output = transform(value) { continuation.yield(output) }
            }
            continuation.onTermination = { _ in token.remove() }
        }
    }

    /// Tells every listener (outside the lock, so a listener may add or remove listeners).
    func notify(_ value: Value) {
        for listener in listeners.withLock({ Array($0.byID.values) }) { listener(value) }
    }
}
