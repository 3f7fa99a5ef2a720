import CouchetteCore
import Foundation

// MARK: - ChangeSequence

/// A position in a `_changes` feed: a plain sequence, or a backfill position `N:S` (spec: gateway-rest-api.md
/// §11.2 points 5–6, sync-function.md §8.2).
///
/// A user's feed that starts after `N` first re-sends the entries (sequence `S ≤ N`) of channels granted to the user
/// after `N`; those entries carry `N:S`, "backfill triggered by `N`, at `S`". Resuming from `N:S` continues that
/// backfill after `S`, then the normal feed after `N`. Normal entries carry plain sequences. (Sync Gateway writes
/// `G:S` with the grant's sequence `G` instead; clients treat sequences as opaque, see `docs/decisions.md`.)
///
/// ```swift
/// try ChangeSequence.parse("12")       // 12
/// try ChangeSequence.parse("5:3")      // 5:3 (backfill triggered by 5, resume after 3)
/// try ChangeSequence.parse("3::12")    // 12 (Sync Gateway's low-water mark 3 is ignored)
/// try ChangeSequence.parse("3:5:2")    // 5:2
/// try ChangeSequence.parse("x")        // throws 400 "Invalid sequence"
/// ChangeSequence(3, triggeredBy: 5).jsonValue  // "5:3"
/// ```
public struct ChangeSequence: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    // MARK: - Properties

    /// The `since` whose backfill this position belongs to; nil for a normal position.
    public var triggeredBy: UInt64?

    /// The sequence: of the entry, or the one to resume after.
    public var sequence: UInt64

    // MARK: - Initialisers

    /// Creates a position; with `triggeredBy`, a backfill position.
    public init(_ sequence: UInt64, triggeredBy: UInt64? = nil) {
        self.sequence = sequence
        self.triggeredBy = triggeredBy
    }

    /// A plain sequence.
    public init(integerLiteral value: UInt64) {
        self.init(value)
    }

    // MARK: - Forms

    /// Whether this is a backfill position.
    public var isBackfill: Bool { triggeredBy != nil }

    /// Where the normal (non-backfill) feed continues after this position: the trigger of a backfill position.
    public var normalPosition: UInt64 { triggeredBy ?? sequence }

    /// `N:S` or `S`.
    public var description: String {
        triggeredBy.map { "\($0):\(sequence)" } ?? "\(sequence)"
    }

    /// The entry's `seq`: a JSON string `"N:S"` for backfill positions, a number otherwise.
    public var jsonValue: JSONValue {
        triggeredBy == nil ? .int(Int64(clamping: sequence)) : .string(description)
    }

    // MARK: - Parsing

    /// Parses a `since` value; an empty string is 0.
    ///
    /// Accepted forms (decimal): `S`; `N:S` (a backfill position); `L::S` and `L:N:S`, Sync Gateway's forms with a
    /// low-water mark `L`, which is ignored (the last two numbers are used as in `S` and `N:S`).
    ///
    /// - Throws: 400 "Invalid sequence" unless the text is one of the grammar's forms.
    public static func parse(_ text: String) throws(GatewayError) -> ChangeSequence {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return 0 }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let last = parts.last, let sequence = number(last) else { throw invalid }
        switch parts.count {
        case 1:
            return ChangeSequence(sequence)
        case 2:
            guard let trigger = number(parts[0]) else { throw invalid }
            return ChangeSequence(sequence, triggeredBy: trigger)
        default:
            guard number(parts[0]) != nil else { throw invalid }
            if parts[1].isEmpty { return ChangeSequence(sequence) }
            guard let trigger = number(parts[1]) else { throw invalid }
            return ChangeSequence(sequence, triggeredBy: trigger)
        }
    }

    /// The error for a malformed sequence.
    public static let invalid = GatewayError.badRequest("Invalid sequence")

    /// A sequence number: decimal digits, at most `Int64.max` (what storage keeps; larger ones are malformed).
    private static func number(_ part: Substring) -> UInt64? {
        guard !part.isEmpty, part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(part).flatMap { $0 <= UInt64(Int64.max) ? $0 : nil }
    }
}
