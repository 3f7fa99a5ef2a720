import CouchetteCore
import Foundation

// MARK: - SyncExpiry

/// A value passed to the sync function's `expiry()`, interpreted as Sync Gateway does
/// (spec: sync-function.md §3, `expiry(v)`).
///
/// Numbers are whole seconds between 0 and 2^32 − 1 (fractions are dropped): up to 2,592,000 (30 days) they
/// count from now, above that they are Unix times. A string holding an integer is read the same way; any other
/// string must be an ISO-8601 / RFC 3339 date-time. `0` means "never expires", as in Couchbase Server.
///
/// ```swift
/// SyncExpiry(.int(3600), now: now)                       // .at(now + 3600)
/// SyncExpiry(.string("2030-01-01T00:00:00Z"), now: now)  // .at(2030-01-01)
/// SyncExpiry(.string("soon"), now: now)                  // nil: ignored
/// ```
enum SyncExpiry: Equatable {
    /// `expiry(0)`: the document does not expire.
    case never
    /// The document expires at this date.
    case at(Date)

    /// The largest relative expiry, in seconds (30 days).
    static let maximumRelativeSeconds: Int64 = 2_592_000

    /// Reads a value given to `expiry()`; nil when it is invalid (the call is then ignored).
    ///
    /// - Parameters:
    ///   - value: The number or string passed.
    ///   - now: The time relative expiries count from.
    init?(_ value: JSONValue, now: Date) {
        switch value {
        case .int(let seconds):
            self.init(seconds: seconds, now: now)
        case .double(let seconds):
            guard seconds.isFinite, seconds >= 0, seconds < 4_294_967_296 else { return nil }
            self.init(seconds: Int64(seconds), now: now)
        case .string(let text):
            if let seconds = Int64(text) {
                self.init(seconds: seconds, now: now)
            } else if let date = Self.parseDate(text) {
                self = .at(date)
            } else {
                return nil
            }
        default:
            return nil
        }
    }

    private init?(seconds: Int64, now: Date) {
        switch seconds {
        case 0: self = .never
        case 1...Self.maximumRelativeSeconds: self = .at(now.addingTimeInterval(TimeInterval(seconds)))
        case (Self.maximumRelativeSeconds + 1)...Int64(UInt32.max): self = .at(Date(timeIntervalSince1970: TimeInterval(seconds)))
        default: return nil
        }
    }

    /// The expiry date, nil for ``never``.
    var date: Date? {
        switch self {
        case .never: nil
        case .at(let date): date
        }
    }

    private static func parseDate(_ text: String) -> Date? {
        let styles = [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle(),
        ]
        for style in styles {
            if let date = try? style.parse(text) { return date }
        }
        return nil
    }
}
