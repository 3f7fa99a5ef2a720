// MARK: - Run state

extension GatewayDatabase {
    // MARK: - Reading

    /// The run state.
    public var state: DatabaseState {
        mutable.withLock { $0.state }
    }

    /// Throws 503 unless the database is online.
    public func requireOnline() throws(GatewayError) {
        let state = state
        guard state == .online else {
            throw .serviceUnavailable(
                state == .offline ? "DB is currently under maintenance" : "DB is \(state.rawValue) - try again later")
        }
    }

    // MARK: - Changing

    /// Changes the run state; going offline closes open `_changes` feeds. Wakes ``waitUntil(_:)`` callers.
    public func setState(_ state: DatabaseState) {
        let woken = mutable.withLock { mutable in
            mutable.state = state
            let matching = mutable.stateWaiters.filter { $0.value.state == state }
            for id in matching.keys { mutable.stateWaiters[id] = nil }
            return matching.values.map(\.continuation)
        }
        if state == .online { changeNotifier.reopen() } else { changeNotifier.close() }
        for continuation in woken { continuation.resume() }
    }

    /// `POST /{db}/_offline` (spec: gateway-rest-api.md §16): an online database goes offline, which closes its
    /// `_changes` feeds, on every node serving a shared storage; offline, stopping and resyncing databases stay as
    /// they are.
    ///
    /// Requests already running finish against the storage, which stays open.
    ///
    /// - Throws: 503 while the database is starting.
    public func takeOffline() throws(GatewayError) {
        switch state {
        case .online:
            setState(.offline)
            try shareSettings()
        case .offline, .stopping, .resyncing:
            return
        case .starting:
            throw .serviceUnavailable("Unable to take Database offline, database must be in Online state")
        }
    }

    /// `POST /{db}/_online` (spec: gateway-rest-api.md §16): an offline database goes online, at once or after
    /// `delay`; online and starting databases stay as they are. Configuration changes already apply when made,
    /// so there is nothing to reload.
    ///
    /// ```swift
    /// try database.takeOnline(after: .seconds(5))   // still Offline now
    /// await database.waitUntil(.online)
    /// ```
    ///
    /// - Parameter delay: How long to stay offline first; the state stays `Offline` meanwhile.
    /// - Throws: 503 while the database is resyncing.
    public func takeOnline(after delay: Duration = .zero) throws(GatewayError) {
        switch state {
        case .online, .starting:
            return
        case .resyncing:
            throw .serviceUnavailable("Database _resync is in progress; try again when it is finished")
        case .offline, .stopping:
            guard delay > .zero else {
                setState(.online)
                try shareSettings()
                return
            }
            Task(executorPreference: executor) { [weak self] in
                try? await Task.sleep(for: delay)
                guard let self, self.state == .offline || self.state == .stopping else { return }
                self.setState(.online)
                try? self.shareSettings()
            }
        }
    }

    /// Waits until the database enters `state` (returns at once when it is in it); returns early when the task
    /// is cancelled.
    public func waitUntil(_ state: DatabaseState) async {
        let id = mutable.withLock { mutable in
            mutable.nextWaiterID += 1
            return mutable.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = mutable.withLock { mutable in
                    if mutable.state == state || Task.isCancelled { return true }
                    mutable.stateWaiters[id] = (state, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = mutable.withLock { $0.stateWaiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }
}
