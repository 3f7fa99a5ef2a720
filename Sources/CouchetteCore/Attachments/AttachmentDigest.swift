import Crypto
import Foundation

/// An attachment's content digest, `"<algorithm>-<base64>"`: `"sha1-…"` as Sync Gateway computes it, or
/// `"md5-…"` as CouchDB and Couchbase Lite 1.x may send it (`replication-protocol.md` §9.1).
///
/// Attachments are content-addressed: the digest names the stored bytes.
///
/// ```swift
/// let digest = AttachmentDigest.sha1(of: Array("hello".utf8))
/// digest.description               // "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00="
/// try AttachmentDigest(parsing: "md5-XUFAKrxLKna5cZ2REBfFkg==").algorithm   // .md5
/// ```
public struct AttachmentDigest: Sendable, Hashable, CustomStringConvertible {
    /// A digest algorithm.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable {
        case sha1
        case md5
        case sha256

        var byteCount: Int {
            switch self {
            case .sha1: 20
            case .md5: 16
            case .sha256: 32
            }
        }
    }

    /// The algorithm.
    public let algorithm: Algorithm
    /// The raw digest bytes.
    public let bytes: [UInt8]

    /// Creates a digest from its parts.
    ///
    /// - Throws: ``CoreError`` `.invalidAttachment` when the byte count does not fit the algorithm.
    public init(algorithm: Algorithm, bytes: [UInt8]) throws(CoreError) {
        guard bytes.count == algorithm.byteCount else {
            throw CoreError(.invalidAttachment, "Invalid \(algorithm.rawValue) digest: \(bytes.count) bytes")
        }
        self.algorithm = algorithm
        self.bytes = bytes
    }

    /// Parses `"<algorithm>-<base64>"`.
    ///
    /// - Throws: ``CoreError`` `.invalidAttachment` for an unknown algorithm, bad base64 or a wrong length.
    public init(parsing text: String) throws(CoreError) {
        guard let dash = text.firstIndex(of: "-"),
            let algorithm = Algorithm(rawValue: String(text[..<dash]).lowercased())
        else {
            throw CoreError(.invalidAttachment, "Invalid attachment digest \"\(text.prefix(80))\": unknown algorithm")
        }
        guard let data = Data(base64Encoded: String(text[text.index(after: dash)...])) else {
            throw CoreError(.invalidAttachment, "Invalid attachment digest \"\(text.prefix(80))\": bad base64")
        }
        try self.init(algorithm: algorithm, bytes: Array(data))
    }

    /// `"<algorithm>-<base64>"`.
    public var description: String { "\(algorithm.rawValue)-\(Data(bytes).base64EncodedString())" }

    /// The digest as lowercase hex, suitable for a file name.
    public var hexString: String { RevisionID.hexString(bytes) }

    /// The SHA-1 digest of `content`, the form Sync Gateway computes.
    public static func sha1(of content: some DataProtocol) -> AttachmentDigest {
        try! AttachmentDigest(algorithm: .sha1, bytes: Array(Insecure.SHA1.hash(data: content)))
    }

    /// The proof that one holds `content` (BLIP's `proveAttachment`, blip-sync-protocol.md §3.9): the SHA-1 of the
    /// nonce's length as one byte, the nonce and the content.
    public static func proof(of content: some DataProtocol, nonce: [UInt8]) -> AttachmentDigest {
        sha1(of: [UInt8(truncatingIfNeeded: nonce.count)] + nonce + Array(content))
    }

    /// The MD5 digest of `content`, the form CouchDB computes.
    public static func md5(of content: some DataProtocol) -> AttachmentDigest {
        try! AttachmentDigest(algorithm: .md5, bytes: Array(Insecure.MD5.hash(data: content)))
    }

    /// The digest of `content` with `algorithm`.
    public static func compute(_ algorithm: Algorithm, of content: some DataProtocol) -> AttachmentDigest {
        switch algorithm {
        case .sha1: sha1(of: content)
        case .md5: md5(of: content)
        case .sha256: try! AttachmentDigest(algorithm: .sha256, bytes: Array(SHA256.hash(data: content)))
        }
    }

    /// Whether `content` has this digest.
    public func matches(_ content: some DataProtocol) -> Bool {
        AttachmentDigest.compute(algorithm, of: content) == self
    }
}
