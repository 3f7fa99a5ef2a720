import Foundation
import Hummingbird

// MARK: - AttachmentByteRange

/// The single byte range of a `Range: bytes=…` request header (RFC 7233 §2.1), resolved against a body length.
///
/// Forms: `bytes=a-b`, `bytes=a-` and the suffix `bytes=-n`. Headers in another unit, with several ranges or
/// malformed are ignored (the whole body is served, as RFC 7233 allows).
///
/// ```swift
/// let range = try AttachmentByteRange(header: "bytes=0-99", length: 1000)   // 0...99
/// range?.contentRange                                                    // "bytes 0-99/1000"
/// try AttachmentByteRange(header: "bytes=2000-", length: 1000)           // throws 416
/// ```
struct AttachmentByteRange: Sendable, Hashable {
    /// The first and last byte served, inclusive.
    let bounds: ClosedRange<Int>
    /// The length of the whole body.
    let length: Int

    /// The range a header asks for, or nil when the whole body should be served.
    ///
    /// - Throws: 416 with `Content-Range: bytes */<length>` when the range lies outside the body.
    init?(header: String?, length: Int) throws(GatewayError) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        let lower: Int
        let upper: Int
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return nil }
            guard suffix > 0, length > 0 else { throw Self.unsatisfiable(length: length) }
            lower = max(0, length - suffix)
            upper = length - 1
        } else {
            guard let start = Int(first), start >= 0 else { return nil }
            let end = last.isEmpty ? Int.max : Int(last)
            guard let end, end >= start else { return nil }
            guard start < length else { throw Self.unsatisfiable(length: length) }
            lower = start
            upper = min(end, length - 1)
        }
        self.bounds = lower...upper
        self.length = length
    }

    /// The `Content-Range` header of a 206 response: `bytes a-b/length`.
    var contentRange: String { "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(length)" }

    /// The 416 error for a range outside a body of `length` bytes.
    static func unsatisfiable(length: Int) -> GatewayError {
        .rangeNotSatisfiable(length: length)
    }
}
