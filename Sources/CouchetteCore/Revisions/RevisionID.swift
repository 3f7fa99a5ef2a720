import Crypto

/// A revision ID, `generation-digest`: `"3-a1b2c3…"`.
///
/// The generation counts edits from the document's creation; the digest tells apart revisions of the same
/// generation. IDs order by generation numerically, then by digest byte-wise (never as whole strings:
/// `"10-a"` follows `"9-b"`). See `replication-protocol.md` §2.
///
/// ```swift
/// let rev = try RevisionID(parsing: "2-7051cbe5c8faecd085a3fa619e6e6337")
/// rev.generation                 // 2
/// let next = try RevisionID.next(after: rev, body: ["type": "task"], deleted: false)   // "3-…"
/// ```
public struct RevisionID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number of edits since the document was created; 1 for its first revision.
    public let generation: Int
    /// The part after the first `-`.
    public let digest: String

    /// Creates an ID from its parts.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionID` when the generation is below 1 or the digest is empty.
    public init(generation: Int, digest: String) throws(CoreError) {
        guard generation >= 1 else {
            throw CoreError(.invalidRevisionID, "Invalid revision ID: generation \(generation) is below 1")
        }
        try RevisionID.validateDigest(digest, in: "\(generation)-\(digest)")
        self.generation = generation
        self.digest = digest
    }

    private init(uncheckedGeneration generation: Int, digest: String) {
        self.generation = generation
        self.digest = digest
    }

    /// The largest generation a revision ID may have (18 digits, as the parser reads): a document whose current
    /// revision has it cannot get a child.
    public static let maximumGeneration = 999_999_999_999_999_999

    /// Parses `generation-digest`.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionID` (400) when the text is not a valid revision ID.
    public init(parsing text: String) throws(CoreError) {
        guard let dash = text.utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw CoreError(.invalidRevisionID, "Invalid revision ID \(RevisionID.quoted(text)): no '-'")
        }
        let prefix = text.utf8[text.utf8.startIndex..<dash]
        guard !prefix.isEmpty, prefix.count <= 18, prefix.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let generation = Int(Substring(prefix)), generation >= 1
        else {
            throw CoreError(.invalidRevisionID, "Invalid revision ID \(RevisionID.quoted(text)): bad generation")
        }
        let digest = String(Substring(text.utf8[text.utf8.index(after: dash)...]))
        try RevisionID.validateDigest(digest, in: text)
        self.generation = generation
        self.digest = digest
    }

    private static func validateDigest(_ digest: String, in text: String) throws(CoreError) {
        guard !digest.isEmpty else {
            throw CoreError(.invalidRevisionID, "Invalid revision ID \(quoted(text)): empty digest")
        }
        guard digest.utf8.count <= 256, digest.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw CoreError(.invalidRevisionID, "Invalid revision ID \(quoted(text)): bad digest")
        }
    }

    private static func quoted(_ text: String) -> String {
        text.count > 80 ? "\"\(text.prefix(80))…\"" : "\"\(text)\""
    }

    /// `generation-digest`.
    public var description: String { "\(generation)-\(digest)" }

    public static func < (lhs: RevisionID, rhs: RevisionID) -> Bool {
        if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
        return lhs.digest.utf8.lexicographicallyPrecedes(rhs.digest.utf8)
    }
}

// MARK: - Making new IDs

extension RevisionID {
    /// The ID of the revision that an edit of `parent` (or a new document, when `parent` is nil) creates.
    ///
    /// A pure function of its inputs, so two nodes making the same edit get the same ID: MD5 over
    /// `[length of parent ID][parent ID][canonical body]`, Sync Gateway's algorithm (so the seeds' revision IDs
    /// come out identical), where the canonical body drops top-level keys starting with `_` except
    /// `_attachments`, which is reduced to each attachment's `content_type`, `digest`, `length` and `encoding`
    /// (`replication-protocol.md` §2.3), and gains `"_deleted":true` for a deletion.
    ///
    /// ```swift
    /// try RevisionID.next(after: nil, body: ["name": "Today", "type": "task-list", "owner": "user1"], deleted: false)
    /// // 1-477f7c4f36a31ce9e86a5f465b168b8a, as Sync Gateway 1.4 answers in the tutorial
    /// ```
    ///
    /// Numbers are digested in Go's form (``JSONValue/canonicalBytes``), as Sync Gateway reads and writes them.
    ///
    /// - Parameter serializedBody: `body.serialized()` when the caller already has it, to save serializing
    ///   the body again (used when it equals the canonical form).
    /// - Throws: ``CoreError`` `.invalidRevisionID` when the parent ID is longer than 255 bytes.
    public static func next(
        after parent: RevisionID?, body: JSONValue, deleted: Bool, serializedBody: [UInt8]? = nil
    ) throws(CoreError) -> RevisionID {
        guard (parent?.generation ?? 0) < maximumGeneration else {
            throw CoreError(
                .invalidRevisionID, "Revision generation \(maximumGeneration) is the last: the document cannot be edited further")
        }
        // The parent's text, `generation-digest`, after its length in a byte, hashed in pieces.
        var generationText = parent.map { String($0.generation) } ?? ""
        var digest = parent?.digest ?? ""
        let parentLength = parent == nil ? 0 : generationText.utf8.count + 1 + digest.utf8.count
        guard parentLength <= 255 else {
            throw CoreError(.invalidRevisionID, "Parent revision ID is longer than 255 bytes")
        }
        var hasher = Insecure.MD5()
        // The prefix in one piece, and bytes by pointer: each `update` call costs more than hashing them.
        var prefix: [UInt8] = [UInt8(parentLength)]
        if parent != nil {
            prefix.reserveCapacity(parentLength + 1)
            generationText.withUTF8 { prefix.append(contentsOf: $0) }
            prefix.append(UInt8(ascii: "-"))
            digest.withUTF8 { prefix.append(contentsOf: $0) }
        }
        prefix.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        if let serializedBody, !deleted, !hasSpecialKeys(body), !body.hasNumbersOutsideCanonicalForm {
            serializedBody.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        } else {
            var digestable = digestableBody(body)
            if deleted, case .object(var members) = digestable {
                members["_deleted"] = true
                digestable = .object(members)
            }
            digestable.canonicalBytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }
        let hash = hasher.finalize()
        // A hex digest is always valid: no need to check it.
        return RevisionID(
            uncheckedGeneration: (parent?.generation ?? 0) + 1, digest: hash.withUnsafeBytes { hexString($0) })
    }

    private static func hasSpecialKeys(_ body: JSONValue) -> Bool {
        guard case .object(let members) = body else { return false }
        return members.keys.contains { $0.utf8.first == UInt8(ascii: "_") }
    }

    private static func digestableBody(_ body: JSONValue) -> JSONValue {
        guard case .object(let members) = body, hasSpecialKeys(body) else { return body }
        var kept: [String: JSONValue] = [:]
        kept.reserveCapacity(members.count)
        for (key, value) in members where !key.hasPrefix("_") { kept[key] = value }
        if case .object(let attachments)? = members["_attachments"] {
            kept["_attachments"] = .object(
                attachments.mapValues { metadata in
                    guard case .object(let fields) = metadata else { return metadata }
                    return .object(fields.filter { ["content_type", "digest", "length", "encoding"].contains($0.key) })
                })
        }
        return .object(kept)
    }

    static func hexString(_ sequence: some Sequence<UInt8>) -> String {
        Array(sequence).withUnsafeBytes { hexString($0) }
    }

    /// Lowercase hex of `bytes`.
    static func hexString(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * bytes.count) { output in
            var index = 0
            for byte in bytes {
                output[index] = digits.utf8Start[Int(byte >> 4)]
                output[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}

// MARK: - Codable

extension RevisionID: Codable {
    public init(from decoder: any Decoder) throws {
        self = try RevisionID(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
