import Foundation

/// One entry of a document's `_attachments`: content type, length, digest, `revpos`, and how the body
/// travels (stub, inline `data`, or a following MIME part). See `replication-protocol.md` §9.
///
/// ```swift
/// let meta = try AttachmentMetadata(json: ["content_type": "image/png", "digest": "sha1-…",
///                                          "length": 1024, "revpos": 2, "stub": true])
/// meta.isStub        // true
/// ```
public struct AttachmentMetadata: Sendable, Hashable {
    /// The MIME type; `application/octet-stream` when none was given.
    public var contentType: String
    /// The decoded length in bytes, when known.
    public var length: Int?
    /// The digest of the stored bytes, when known (a new inline attachment may arrive without one).
    public var digest: AttachmentDigest?
    /// The generation of the revision that last added or changed this attachment.
    public var revpos: Int?
    /// The body is omitted: the receiver already has it.
    public var isStub: Bool
    /// The body follows in a MIME part.
    public var follows: Bool
    /// The inline body (`data`, base64 in JSON), when present.
    public var data: [UInt8]?
    /// The compression of the stored or sent body (`"gzip"`), if any.
    public var encoding: String?
    /// The compressed length, with ``encoding``.
    public var encodedLength: Int?

    /// The default content type.
    public static let defaultContentType = "application/octet-stream"

    /// Creates metadata.
    public init(
        contentType: String = AttachmentMetadata.defaultContentType, length: Int? = nil,
        digest: AttachmentDigest? = nil, revpos: Int? = nil, isStub: Bool = false, follows: Bool = false,
        data: [UInt8]? = nil, encoding: String? = nil, encodedLength: Int? = nil
    ) {
        self.contentType = contentType
        self.length = length
        self.digest = digest
        self.revpos = revpos
        self.isStub = isStub
        self.follows = follows
        self.data = data
        self.encoding = encoding
        self.encodedLength = encodedLength
    }

    /// Metadata for inline content, with its SHA-1 digest and length computed.
    public init(content: [UInt8], contentType: String = AttachmentMetadata.defaultContentType, revpos: Int? = nil) {
        self.init(
            contentType: contentType, length: content.count, digest: .sha1(of: content), revpos: revpos,
            data: content)
    }

    /// Reads one `_attachments` entry.
    ///
    /// - Throws: ``CoreError`` `.invalidAttachment` for wrong types, bad base64, a negative length, a stub
    ///   without a valid `revpos`, or inline data that does not match its digest or length.
    public init(json: JSONValue) throws(CoreError) {
        guard case .object(let fields) = json else {
            throw CoreError(.invalidAttachment, "Attachment metadata must be an object, found \(json.typeDescription)")
        }
        func string(_ key: String) throws(CoreError) -> String? {
            guard let value = fields[key], !value.isNull else { return nil }
            guard case .string(let text) = value else {
                throw CoreError(.invalidAttachment, "Attachment \(key) must be a string")
            }
            return text
        }
        func integer(_ key: String) throws(CoreError) -> Int? {
            guard let value = fields[key], !value.isNull else { return nil }
            guard let number = value.intValue, let result = Int(exactly: number), result >= 0 else {
                throw CoreError(.invalidAttachment, "Attachment \(key) must be a non-negative integer")
            }
            return result
        }
        func flag(_ key: String) throws(CoreError) -> Bool {
            guard let value = fields[key], !value.isNull else { return false }
            guard case .bool(let result) = value else {
                throw CoreError(.invalidAttachment, "Attachment \(key) must be a Boolean")
            }
            return result
        }

        self.contentType = try string("content_type") ?? AttachmentMetadata.defaultContentType
        self.length = try integer("length")
        self.digest = try string("digest").map { text throws(CoreError) in try AttachmentDigest(parsing: text) }
        self.revpos = try integer("revpos")
        self.isStub = try flag("stub")
        self.follows = try flag("follows")
        self.encoding = try string("encoding")
        self.encodedLength = try integer("encoded_length")
        if let base64 = try string("data") {
            guard let decoded = Data(base64Encoded: base64) else {
                throw CoreError(.invalidAttachment, "Attachment data is not valid base64")
            }
            self.data = Array(decoded)
        } else {
            self.data = nil
        }
        try validate()
    }

    private func validate() throws(CoreError) {
        if isStub {
            guard let revpos, revpos >= 1 else {
                throw CoreError(.invalidAttachment, "Missing/invalid revpos in stub attachment")
            }
        }
        if let data, encoding == nil {
            if let length, length != data.count {
                throw CoreError(.invalidAttachment, "Attachment length \(length) does not match its data (\(data.count) bytes)")
            }
            if let digest, !digest.matches(data) {
                throw CoreError(.invalidAttachment, "Attachment data does not match its digest")
            }
        }
        if !isStub, !follows, data == nil {
            throw CoreError(.invalidAttachment, "Attachment has neither data, stub nor follows")
        }
    }

    /// The `_attachments` entry as JSON (`data` as base64 when inline).
    public var json: JSONValue {
        var fields: [String: JSONValue] = ["content_type": .string(contentType)]
        if let length { fields["length"] = .int(Int64(length)) }
        if let digest { fields["digest"] = .string(digest.description) }
        if let revpos { fields["revpos"] = .int(Int64(revpos)) }
        if isStub { fields["stub"] = true }
        if follows { fields["follows"] = true }
        if let data { fields["data"] = .string(Data(data).base64EncodedString()) }
        if let encoding { fields["encoding"] = .string(encoding) }
        if let encodedLength { fields["encoded_length"] = .int(Int64(encodedLength)) }
        return .object(fields)
    }

    /// The same metadata as a stub: the body dropped, `stub: true`.
    public var stub: AttachmentMetadata {
        var copy = self
        copy.isStub = true
        copy.follows = false
        copy.data = nil
        return copy
    }

    /// Reads a whole `_attachments` object.
    ///
    /// - Throws: ``CoreError`` `.invalidAttachment` naming the attachment at fault.
    public static func parseAll(_ json: JSONValue) throws(CoreError) -> [String: AttachmentMetadata] {
        guard case .object(let entries) = json else {
            throw CoreError(.invalidAttachment, "_attachments must be an object, found \(json.typeDescription)")
        }
        var result: [String: AttachmentMetadata] = [:]
        for (name, entry) in entries {
            do {
                result[name] = try AttachmentMetadata(json: entry)
            } catch {
                throw CoreError(.invalidAttachment, "Attachment \"\(name)\": \(error.message)")
            }
        }
        return result
    }
}
