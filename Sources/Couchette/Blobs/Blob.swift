import CouchetteCore
import Foundation

/// Binary content in a document: an image, a PDF, any bytes. Content is stored once per digest; a 1.x
/// attachment is a Blob under `"_attachments"`, and every blob replicates as a CouchDB attachment.
///
/// A blob starts with its content in memory, in a stream or in a file; saving the document that holds it
/// copies the content into the database's blob store, and from then on the blob reads it from there. A blob
/// read from a saved document holds only metadata (``properties``) and reads its content from the store
/// when asked.
///
/// ```swift
/// let image = Blob(contentType: "image/jpeg", data: jpeg)
/// image.digest        // "sha1-…", known at once for in-memory content
/// image.properties    // ["@type": "blob", "content_type": "image/jpeg", "digest": "sha1-…", "length": 1234]
/// try tasks.save(document: task.toMutable().setBlob(image, forKey: "image"))
/// let bytes = try tasks.document(id: task.id)?.blob(forKey: "image")?.content
/// ```
///
/// Two blobs are equal when both have a digest and the digests are equal (whatever their content types);
/// otherwise only a blob is equal to itself. A blob made from a stream or a file learns its digest when it is
/// saved (or, for a stream, when ``content`` is first read), so its hash value changes then: do not keep such
/// a blob in a `Set` or as a dictionary key across a save.
///
/// Thread-safe: the mutable state (content source, digest, length) is guarded by a lock.
public final class Blob: Equatable, Hashable, @unchecked Sendable, CustomStringConvertible {
    /// Where a blob's content is.
    enum Body {
        /// In memory.
        case memory(Data)
        /// In a stream that has not been read yet; it can be read only once.
        case stream(InputStream)
        /// In a file outside the store.
        case file(URL)
        /// In a blob store, by digest (which may not hold it, e.g. an attachment not yet pulled).
        case stored(BlobStore)
        /// Nowhere locally: the blob has only metadata, or its stream failed.
        case unavailable
    }

    /// A blob's mutable state.
    struct State {
        var body: Body
        var digest: AttachmentDigest?
        var length: UInt64?
    }

    /// The MIME type of the content, such as `"image/jpeg"`; `nil` when the blob's metadata had none.
    public let contentType: String?

    private let lock = NSLock()
    private var state: State

    // MARK: - Creating blobs

    /// Creates a blob with content in memory. Its ``digest`` and ``length`` are known at once.
    ///
    /// - Parameters:
    ///   - contentType: The MIME type of the content, such as `"image/jpeg"`.
    ///   - data: The content.
    public init(contentType: String, data: Data) {
        self.contentType = contentType
        state = State(body: .memory(data), digest: .sha1(of: data), length: UInt64(data.count))
    }

    /// Creates a blob whose content is read from a stream when the blob is saved, in chunks, without holding
    /// it in memory. The stream can be read only once: reading ``content`` or ``contentStream`` before the
    /// save drains it into memory. ``digest`` and ``length`` are known after the save.
    ///
    /// - Parameters:
    ///   - contentType: The MIME type of the content.
    ///   - contentStream: A stream of the content; the blob opens it if needed and closes it when done.
    public init(contentType: String, contentStream: InputStream) {
        self.contentType = contentType
        state = State(body: .stream(contentStream), digest: nil, length: nil)
    }

    /// Creates a blob whose content is copied from a file when the blob is saved, in chunks. ``length`` is
    /// the file's current size; ``digest`` is known after the save.
    ///
    /// - Parameters:
    ///   - contentType: The MIME type of the content.
    ///   - url: The URL of a readable regular file.
    /// - Throws: ``CouchetteError`` `.badInput` when `url` is not a file URL or does not name a readable
    ///   regular file, `.notFound` when there is no file there.
    public init(contentType: String, fileURL url: URL) throws {
        let path = try BlobStore.regularFilePath(of: url)
        guard FileIO.isReadable(path) else {
            throw CouchetteError(.badInput, message: "The file \(url.lastPathComponent) is not readable")
        }
        let size = try FileIO.fileInfo(path)?.size
        self.contentType = contentType
        state = State(body: .file(url), digest: nil, length: size)
    }

    /// Creates a blob from its parts; for the store and document layers.
    init(contentType: String?, body: Body, digest: AttachmentDigest?, length: UInt64?) {
        self.contentType = contentType
        state = State(body: body, digest: digest, length: length)
    }

    /// Runs `update` with the state locked.
    func withState<Result>(_ update: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try update(&state)
    }

    // MARK: - Content

    /// The whole content, read into memory: from memory, from the blob store once saved, or from the
    /// stream or file given at creation. `nil` when the content is not stored locally (for example an
    /// attachment whose body has not been pulled) or cannot be read.
    ///
    /// For a large blob prefer ``contentStream``.
    public var content: Data? {
        withState { state in
            switch state.body {
            case .memory(let data):
                return data
            case .stream:
                return Blob.drainStream(&state)
            case .file(let url):
                return try? Data(contentsOf: url)
            case .stored(let store):
                guard let digest = state.digest else { return nil }
                return try? store.data(for: digest)
            case .unavailable:
                return nil
            }
        }
    }

    /// A new, unopened stream over the content; `nil` when the content is not stored locally.
    ///
    /// Each call returns a fresh stream; the caller opens, reads and closes it.
    public var contentStream: InputStream? {
        withState { state in
            switch state.body {
            case .memory(let data):
                return InputStream(data: data)
            case .stream:
                return Blob.drainStream(&state).map { InputStream(data: $0) }
            case .file(let url):
                return InputStream(url: url)
            case .stored(let store):
                return state.digest.flatMap { store.inputStream(for: $0) }
            case .unavailable:
                return nil
            }
        }
    }

    /// The length of the content in bytes; 0 while unknown (a stream blob before it is saved).
    public var length: UInt64 {
        withState { $0.length ?? 0 }
    }

    /// The digest of the content, `"sha1-<base64>"` (or `"md5-…"` for an attachment from a CouchDB peer).
    /// Known at once for a blob made from data, after the save for one made from a stream or a file.
    public var digest: String? {
        attachmentDigest?.description
    }

    /// The parsed digest of the content, when known.
    var attachmentDigest: AttachmentDigest? {
        withState { $0.digest }
    }

    /// Reads the rest of a stream body into memory, which becomes the body; `nil` (and no body) on a
    /// stream error.
    private static func drainStream(_ state: inout State) -> Data? {
        guard case .stream(let stream) = state.body else { return nil }
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        var data = Data()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: FileIO.chunkSize)
        defer { buffer.deallocate() }
        while true {
            let count = stream.read(buffer, maxLength: FileIO.chunkSize)
            if count == 0 { break }
            guard count > 0 else {
                state.body = .unavailable
                return nil
            }
            data.append(buffer, count: count)
        }
        state.body = .memory(data)
        state.digest = .sha1(of: data)
        state.length = UInt64(data.count)
        return data
    }

    // MARK: - Metadata

    /// The blob's dictionary as stored in a document (Couchbase Lite 3):
    /// `["@type": "blob", "content_type": …, "digest": …, "length": …]`, leaving out what is not known yet.
    /// `length` is an `Int`.
    public var properties: [String: Any] {
        let (digest, length) = withState { ($0.digest, $0.length) }
        var result: [String: Any] = ["@type": "blob"]
        if let contentType { result["content_type"] = contentType }
        if let digest { result["digest"] = digest.description }
        if let length { result["length"] = Int(clamping: length) }
        return result
    }

    /// The 1.x name for ``properties``.
    public var metadata: [String: Any] {
        properties
    }

    /// ``properties`` as JSON, with sorted keys: `{"@type":"blob","content_type":"text/plain","digest":"sha1-…","length":5}`.
    public func toJSON() -> String {
        json.serializedString()
    }

    /// ``properties`` as a JSON value.
    var json: JSONValue {
        let (digest, length) = withState { ($0.digest, $0.length) }
        var members: [String: JSONValue] = ["@type": "blob"]
        if let contentType { members["content_type"] = .string(contentType) }
        if let digest { members["digest"] = .string(digest.description) }
        if let length { members["length"] = .int(Int64(clamping: length)) }
        return .object(members)
    }

    /// Whether a dictionary describes a blob: `"@type"` is `"blob"` and `"digest"` is a string.
    public static func isBlob(properties: [String: Any]) -> Bool {
        properties["@type"] as? String == "blob" && properties["digest"] is String
    }

    /// A short description: content type, length and digest, never the content.
    public var description: String {
        let (digest, length) = withState { ($0.digest, $0.length) }
        let size = length.map { "\($0) bytes" } ?? "length unknown"
        return "Blob(\(contentType ?? "no content type"), \(size), \(digest?.description ?? "no digest"))"
    }

    // MARK: - Equality

    /// Whether two blobs are the same content: both have a digest and the digests are equal, or they are the
    /// same object.
    public static func == (lhs: Blob, rhs: Blob) -> Bool {
        if lhs === rhs { return true }
        guard let left = lhs.attachmentDigest, let right = rhs.attachmentDigest else { return false }
        return left == right
    }

    /// Hashes the digest when known, else the object's identity.
    public func hash(into hasher: inout Hasher) {
        if let digest = attachmentDigest {
            hasher.combine(digest)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}
