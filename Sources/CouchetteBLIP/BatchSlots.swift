// MARK: - BatchSlots

/// A count of `changes` messages that may await their replies at once, for a side feeding changes (the gateway's and
/// a Lite listener's): ``acquire()`` waits for a free one.
public actor BatchSlots {
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// `count` free slots.
    public init(count: Int) {
        free = count
    }

    /// Takes a slot, waiting for one to be released when none is free.
    public func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives a slot back.
    public func release() {
        if waiters.isEmpty {
            free += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
