/// Identifies a registered listener; `remove()` unregisters it.
public final class ListenerToken: Sendable, Hashable {
    let id: UInt64
    private let onRemove: @Sendable (UInt64) -> Void

    init(id: UInt64, onRemove: @escaping @Sendable (UInt64) -> Void) {
        self.id = id
        self.onRemove = onRemove
    }

    /// Unregisters the listener; it receives nothing more. Removing twice does nothing.
    public func remove() { onRemove(id) }

    public static func == (lhs: ListenerToken, rhs: ListenerToken) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
