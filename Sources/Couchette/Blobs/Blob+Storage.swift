import CouchetteCore
import Foundation

// MARK: - Blobs and the blob store

extension Blob {
    /// Creates a blob from its dictionary in a document, reading content lazily from `store`.
    ///
    /// Accepts a Couchbase Lite 3 blob dictionary (`"@type": "blob"`) or a 1.x `_attachments` entry (no
    /// `"@type"`). `digest` is required; `content_type` and `length` are optional. When `store` does not hold
    /// the digest (or the digest is not SHA-1), ``content`` is `nil` unless the dictionary carries the body
    /// inline as base64 `data`, which must match the digest.
    ///
    /// - Parameters:
    ///   - properties: The blob's dictionary.
    ///   - store: The database's blob store; `nil` for a blob with metadata only.
    /// - Throws: ``CouchetteError`` `.badInput` when `"@type"` is not `"blob"`, the digest is missing or
    ///   malformed, `content_type` is not a string, `length` is not a non-negative integer, or inline data
    ///   does not match the digest.
    convenience init(properties: [String: Any], store: BlobStore?) throws {
        if let type = properties["@type"], Blob.string(type) != "blob" {
            throw CouchetteError(.badInput, message: "A blob's \"@type\" must be \"blob\"")
        }
        guard let digestText = properties["digest"].flatMap(Blob.string) else {
            throw CouchetteError(.badInput, message: "A blob needs a string \"digest\"")
        }
        let digest: AttachmentDigest
        do {
            digest = try AttachmentDigest(parsing: digestText)
        } catch {
            throw CouchetteError.wrap(error)
        }
        var contentType: String?
        if let value = properties["content_type"], !(value is NSNull) {
            guard let text = Blob.string(value) else {
                throw CouchetteError(.badInput, message: "A blob's \"content_type\" must be a string")
            }
            contentType = text
        }
        var length: UInt64?
        if let value = properties["length"], !(value is NSNull) {
            guard let number = Blob.unsignedInteger(value) else {
                throw CouchetteError(.badInput, message: "A blob's \"length\" must be a non-negative integer")
            }
            length = number
        }
        var body: Body = store.map { .stored($0) } ?? .unavailable
        if store?.contains(digest) != true, let base64 = properties["data"].flatMap(Blob.string) {
            guard let data = Data(base64Encoded: base64), digest.matches(data) else {
                throw CouchetteError(.badInput, message: "A blob's inline data does not match its digest \(digest)")
            }
            body = .memory(data)
            length = UInt64(data.count)
        }
        self.init(contentType: contentType, body: body, digest: digest, length: length)
    }

    /// Creates a blob from a parsed `_attachments` entry, reading content lazily from `store` (or from the
    /// entry's inline data).
    convenience init(attachment: AttachmentMetadata, store: BlobStore?) {
        var body: Body = store.map { .stored($0) } ?? .unavailable
        var length = attachment.length.map { UInt64($0) }
        if let data = attachment.data, attachment.encoding == nil, let digest = attachment.digest,
            store?.contains(digest) != true
        {
            body = .memory(Data(data))
            length = UInt64(data.count)
        }
        self.init(contentType: attachment.contentType, body: body, digest: attachment.digest, length: length)
    }

    /// Copies the content into `store` (once per digest) and makes the blob read it from there. Learns the
    /// digest and length of a stream or file blob. Idempotent: installing again into the same store does
    /// nothing; installing into another store copies the stored body there.
    ///
    /// A stream is consumed by the first attempt: if that fails, the content is lost and later attempts
    /// throw `.notFound`.
    ///
    /// - Throws: ``CouchetteError`` `.notFound` when the content is not available locally and `store` does
    ///   not hold it already; `.io` when reading the source or writing the store fails.
    func install(into store: BlobStore) throws {
        try withState { state in
            switch state.body {
            case .stored(let current) where current === store:
                return
            case .stored(let current):
                if let digest = state.digest, !store.contains(digest) {
                    guard current.contains(digest) else { throw Blob.contentUnavailable(state.digest) }
                    try store.write(contentOf: digest, from: current.reader(for: digest))
                } else if state.digest == nil {
                    throw Blob.contentUnavailable(nil)
                }
            case .memory(let data):
                let written = try store.write(data: data)
                state.digest = written.digest
                state.length = written.length
            case .stream(let stream):
                do {
                    let written = try store.write(stream: stream)
                    state.digest = written.digest
                    state.length = written.length
                } catch {
                    state.body = .unavailable
                    throw error
                }
            case .file(let url):
                let written = try store.write(fileAt: url)
                state.digest = written.digest
                state.length = written.length
            case .unavailable:
                guard let digest = state.digest, store.contains(digest) else {
                    throw Blob.contentUnavailable(state.digest)
                }
            }
            state.body = .stored(store)
        }
    }

    /// The store the blob reads its content from, once installed or when made from stored properties.
    var store: BlobStore? {
        withState { state in
            if case .stored(let store) = state.body { return store }
            return nil
        }
    }

    /// The blob as a 1.x `_attachments` stub entry: `content_type` (`application/octet-stream` when none),
    /// `digest` and `length` when known, `revpos` when given, and `stub: true`.
    func attachmentMetadata(revpos: Int?) -> [String: Any] {
        let (digest, length) = withState { ($0.digest, $0.length) }
        var result: [String: Any] = [
            "content_type": contentType ?? AttachmentMetadata.defaultContentType,
            "stub": true,
        ]
        if let digest { result["digest"] = digest.description }
        if let length { result["length"] = Int(clamping: length) }
        if let revpos { result["revpos"] = revpos }
        return result
    }

    /// The blob as an ``AttachmentMetadata`` stub.
    func attachment(revpos: Int?) -> AttachmentMetadata {
        let (digest, length) = withState { ($0.digest, $0.length) }
        return AttachmentMetadata(
            contentType: contentType ?? AttachmentMetadata.defaultContentType,
            length: length.map { Int(clamping: $0) }, digest: digest, revpos: revpos, isStub: true)
    }

    // MARK: - Helpers

    private static func contentUnavailable(_ digest: AttachmentDigest?) -> CouchetteError {
        CouchetteError(
            .notFound, message: "The content of blob \(digest?.description ?? "without digest") is not available")
    }

    private static func string(_ value: Any) -> String? {
        switch value {
        case let text as String: text
        case let json as JSONValue: json.stringValue
        default: nil
        }
    }

    private static func unsignedInteger(_ value: Any) -> UInt64? {
        switch value {
        case is Bool where type(of: value) == Bool.self: return nil
        case let number as Int: return UInt64(exactly: number)
        case let number as Int64: return UInt64(exactly: number)
        case let number as UInt64: return number
        case let number as Int32: return UInt64(exactly: number)
        case let number as UInt32: return UInt64(number)
        case let number as Double: return UInt64(exactly: number)
        case let json as JSONValue: return json.intValue.flatMap { UInt64(exactly: $0) }
        case let number as NSNumber: return UInt64(exactly: number.doubleValue)
        default: return nil
        }
    }
}
