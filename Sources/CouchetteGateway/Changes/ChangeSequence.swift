import Foundation

// MARK: - ChangeSequence

/// Parses the sequences clients send back as `since` (spec: gateway-rest-api.md §11.2 point 6).
///
/// Sync Gateway emits plain integers and compound strings: `T:N` (backfill triggered at `T`), `L::N` and
/// `L:T:N` (low-water mark `L`). Clients echo them verbatim; the gateway resumes after the last number.
///
/// ```swift
/// try ChangeSequence.parse("12")       // 12
/// try ChangeSequence.parse("5:12")     // 12
/// try ChangeSequence.parse("3::12")    // 12
/// try ChangeSequence.parse("3:5:12")   // 12
/// try ChangeSequence.parse("x")        // throws 400 "Invalid sequence"
/// ```
public enum ChangeSequence {
    /// The sequence to resume after; an empty string is 0.
    ///
    /// - Throws: 400 "Invalid sequence" unless the text is one of the grammar's forms, in decimal.
    public static func parse(_ text: String) throws(GatewayError) -> UInt64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return 0 }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        let valid: Bool
        switch parts.count {
        case 1: valid = true
        case 2: valid = isNumber(parts[0])
        case 3: valid = isNumber(parts[0]) && (parts[1].isEmpty || isNumber(parts[1]))
        default: valid = false
        }
        guard valid, let last = parts.last, isNumber(last), let value = UInt64(last) else {
            throw invalid
        }
        return value
    }

    /// The error for a malformed sequence.
    public static let invalid = GatewayError.badRequest("Invalid sequence")

    private static func isNumber(_ part: Substring) -> Bool {
        !part.isEmpty && part.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
