import Foundation
import NIOCore

// MARK: - Duration conversions

extension Duration {
    /// The duration in whole nanoseconds (rounded down).
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// The duration as NIO's `TimeAmount`, for timers on an event loop.
    var timeAmount: TimeAmount { .nanoseconds(nanoseconds) }

    /// The duration in seconds, for Foundation's clocks.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The moment this long from now, for `NSCondition.wait(until:)`.
    var deadlineFromNow: Date { Date().addingTimeInterval(timeInterval) }
}
