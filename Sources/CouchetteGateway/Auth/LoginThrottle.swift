import Foundation
import Synchronization

// MARK: - LoginThrottle

/// Slows password guessing: failed logins are counted per user name and per client address in token buckets, and
/// a name or address whose bucket is empty gets 429 with `Retry-After` until it refills.
///
/// A bucket holds ``Policy/burst`` attempts and regains one every ``Policy/refillInterval``: with the defaults a user
/// name takes 10 failures at once, then one every 6 s; an address 30, then one every 2 s. Successful logins cost
/// nothing, and a login whose password was verified before (``PasswordVerificationCache``) is never throttled, so
/// guessers cannot lock a signed-in user out.
///
/// ```swift
/// let throttle = LoginThrottle()
/// if let wait = throttle.delay(user: "alice", address: "10.0.0.7") { throw GatewayError.tooManyRequests(retryAfter: wait) }
/// throttle.recordFailure(user: "alice", address: "10.0.0.7")
/// ```
public final class LoginThrottle: Sendable {
    /// The size and refill rate of one kind of bucket.
    public struct Policy: Sendable, Equatable {
        /// The failures allowed at once.
        public var burst: Double
        /// The time after which one more failure is allowed.
        public var refillInterval: Duration

        /// Creates a policy.
        public init(burst: Double, refillInterval: Duration) {
            self.burst = burst
            self.refillInterval = refillInterval
        }

        /// Per user name: 10 at once, then one every 6 s.
        public static let perUser = Policy(burst: 10, refillInterval: .seconds(6))
        /// Per client address: 30 at once, then one every 2 s.
        public static let perAddress = Policy(burst: 30, refillInterval: .seconds(2))
        /// No throttling (a bucket that never empties).
        public static let unlimited = Policy(burst: .infinity, refillInterval: .seconds(1))
    }

    /// A bucket: its tokens at `updated`.
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private struct State {
        var users: [String: Bucket] = [:]
        var addresses: [String: Bucket] = [:]
    }

    private let state = Mutex(State())
    private let userPolicy: Policy
    private let addressPolicy: Policy
    private let now: @Sendable () -> ContinuousClock.Instant

    /// The most buckets of each kind kept; full ones are dropped first when there are more.
    static let capacity = 50_000

    /// The policies of throttles created without explicit ones; tests slow the refill down so that a loaded
    /// machine's slow bcrypt does not refill buckets between attempts.
    @TaskLocal static var defaultPolicies: (perUser: Policy, perAddress: Policy) = (.perUser, .perAddress)

    /// The failure delay of throttles created without an explicit one (tests that fail logins by the hundred set
    /// zero).
    @TaskLocal static var defaultFailureDelay = Duration.milliseconds(250)

    /// How long a failed or throttled login waits before it is answered: a guesser waits for each answer (without
    /// using the CPU meanwhile), so a few of them cannot crowd out everyone else's requests.
    public let failureDelay: Duration

    /// Creates a throttle.
    ///
    /// - Parameters:
    ///   - perUser: The bucket of each user name; ``Policy/perUser`` when nil.
    ///   - perAddress: The bucket of each client address; ``Policy/perAddress`` when nil.
    ///   - failureDelay: How long failed logins wait for their answer; 250 ms when nil.
    ///   - now: The clock.
    public init(
        perUser: Policy? = nil, perAddress: Policy? = nil, failureDelay: Duration? = nil,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.failureDelay = failureDelay ?? Self.defaultFailureDelay
        userPolicy = perUser ?? Self.defaultPolicies.perUser
        addressPolicy = perAddress ?? Self.defaultPolicies.perAddress
        self.now = now
    }

    /// How long the caller must wait before trying `user` from `address` again; nil when it may try now.
    public func delay(user: String, address: String?) -> Duration? {
        let instant = now()
        return state.withLock { state in
            let userWait = Self.wait(state.users[user], policy: userPolicy, at: instant)
            let addressWait = address.flatMap { Self.wait(state.addresses[$0], policy: addressPolicy, at: instant) }
            switch (userWait, addressWait) {
            case (nil, nil): return nil
            case (let wait?, nil), (nil, let wait?): return wait
            case (let first?, let second?): return max(first, second)
            }
        }
    }

    /// Counts a failed login against `user` and `address`.
    public func recordFailure(user: String, address: String?) {
        let instant = now()
        state.withLock { state in
            Self.take(from: &state.users, key: user, policy: userPolicy, at: instant)
            if let address { Self.take(from: &state.addresses, key: address, policy: addressPolicy, at: instant) }
        }
    }

    // MARK: - Buckets

    private static func refilled(_ bucket: Bucket?, policy: Policy, at instant: ContinuousClock.Instant) -> Bucket {
        guard let bucket else { return Bucket(tokens: policy.burst, updated: instant) }
        let elapsed = bucket.updated.duration(to: instant) / policy.refillInterval
        return Bucket(tokens: min(policy.burst, bucket.tokens + max(0, elapsed)), updated: instant)
    }

    private static func wait(_ bucket: Bucket?, policy: Policy, at instant: ContinuousClock.Instant) -> Duration? {
        let current = refilled(bucket, policy: policy, at: instant)
        guard current.tokens < 1 else { return nil }
        return policy.refillInterval * (1 - current.tokens)
    }

    private static func take(
        from buckets: inout [String: Bucket], key: String, policy: Policy, at instant: ContinuousClock.Instant
    ) {
        if buckets.count >= capacity, buckets[key] == nil {
            buckets = buckets.filter { refilled($0.value, policy: policy, at: instant).tokens < policy.burst }
            if buckets.count >= capacity { buckets.removeAll() }
        }
        var bucket = refilled(buckets[key], policy: policy, at: instant)
        bucket.tokens = max(0, bucket.tokens - 1)
        buckets[key] = bucket
    }
}
