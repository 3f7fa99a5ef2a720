// MARK: - BatchSlots

/// A count of `changes` messages that may await their replies at once: ``acquire()`` waits for a free one.
actor BatchSlots {
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        free = count
    }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            free += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
