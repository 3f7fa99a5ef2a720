// MARK: - ConstantTime

/// Comparisons whose running time does not depend on where two secrets first differ.
///
/// Used for password hashes, session IDs and cached password digests, so that an attacker timing responses cannot
/// learn a secret byte by byte. Only the lengths may leak (they are not secret for fixed-size hashes and IDs).
///
/// ```swift
/// ConstantTime.equals("d3b07384d1", "d3b07384d1")   // true
/// ConstantTime.equals([1, 2, 3], [1, 2, 4])         // false, after looking at every byte
/// ```
public enum ConstantTime {
    /// Whether two byte sequences are equal, comparing every byte of the longer one without an early exit.
    ///
    /// - Parameters:
    ///   - lhs: The first sequence.
    ///   - rhs: The second sequence.
    /// - Returns: `true` when both have the same length and the same bytes.
    public static func equals(_ lhs: some Sequence<UInt8>, _ rhs: some Sequence<UInt8>) -> Bool {
        let left = Array(lhs)
        let right = Array(rhs)
        let length = Swift.max(left.count, right.count)
        var difference: UInt8 = left.count == right.count ? 0 : 1
        for index in 0..<length {
            let leftByte = index < left.count ? left[index] : 0
            let rightByte = index < right.count ? right[index] : 0
            difference |= leftByte ^ rightByte
        }
        return difference == 0
    }

    /// Whether two strings have the same UTF-8 bytes, compared in constant time.
    ///
    /// Strings are compared byte for byte, not by Unicode canonical equivalence: `"é"` precomposed and decomposed
    /// differ, as they do for bcrypt and for session IDs.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        equals(lhs.utf8, rhs.utf8)
    }
}
