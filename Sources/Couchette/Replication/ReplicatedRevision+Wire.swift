import CouchetteCore
import Foundation
import HTTPTypes
import NIOCore

// MARK: - Revisions on the wire

/// The CouchDB forms of a replicated revision (replication-protocol.md §4.3, §8.2): a JSON body with `_revisions`
/// and attachments carried inline as base64 `data` or following as MIME parts of a `multipart/related` body.
extension ReplicatedRevision {
    /// Attachments up to this size travel inline as base64 in JSON; a revision with a larger one to send is put on
    /// its own as `multipart/related`, its content in binary parts.
    static let inlineAttachmentLimit = 16 * 1024

    /// Reads a revision sent by a peer: `_id`, `_rev`, `_revisions`, `_deleted`, and `_attachments` whose entries
    /// carry `data`, follow in `following` (their parts, by name, in memory or in files), or are stubs of content the
    /// receiver holds.
    ///
    /// - Returns: nil when the body lacks `_id` or `_rev` (e.g. a `{"missing": …}` entry).
    /// - Throws: `.badInput` for attachment data that is not base64 or a `follows` attachment without its part.
    init?(wireBody body: [String: JSONValue], following: [String: Blob] = [:]) throws {
        guard let id = body["_id"]?.stringValue, let rev = body["_rev"]?.stringValue else { return nil }
        var history = [rev]
        if let revisions = body["_revisions"], let start = revisions["start"]?.intValue {
            history = (revisions["ids"]?.arrayValue ?? []).enumerated().compactMap { offset, digest in
                digest.stringValue.map { "\(start - Int64(offset))-\($0)" }
            }
        }
        var stored = body.filter { !["_id", "_rev", "_revisions", "_deleted"].contains($0.key) }
        var blobs: [String: Blob] = [:]
        if var attachments = body["_attachments"]?.objectValue {
            for (name, entry) in attachments {
                guard var metadata = entry.objectValue else { continue }
                let contentType = metadata["content_type"]?.stringValue ?? "application/octet-stream"
                let blob: Blob
                if let data = metadata["data"]?.stringValue {
                    guard let bytes = Data(base64Encoded: data) else {
                        throw CouchetteError(.badInput, message: "Attachment \"\(name)\" of \"\(id)\" is not base64")
                    }
                    blob = Blob(contentType: contentType, data: bytes)
                } else if metadata["follows"]?.boolValue == true {
                    guard let part = following[name] else {
                        throw CouchetteError(.badInput, message: "Attachment \"\(name)\" of \"\(id)\" did not follow")
                    }
                    blob = part
                } else {
                    continue
                }
                blobs[name] = blob
                metadata["data"] = nil
                metadata["follows"] = nil
                metadata["stub"] = true
                if metadata["digest"] == nil || metadata["length"] == nil {
                    // Rare (peers send both): read the content to tell them.
                    let content = blob.content ?? Data()
                    if metadata["digest"] == nil {
                        metadata["digest"] = .string(AttachmentDigest.sha1(of: Array(content)).description)
                    }
                    if metadata["length"] == nil { metadata["length"] = .int(Int64(content.count)) }
                }
                attachments[name] = .object(metadata)
            }
            stored["_attachments"] = .object(attachments)
        }
        self.init(
            documentID: id, revisionID: rev, history: history, isDeleted: body["_deleted"]?.boolValue ?? false,
            body: stored, attachments: blobs)
    }

    /// Reads a `multipart/related` revision: the JSON part, then the bodies of its `follows` attachments (matched
    /// by `Content-Disposition` file name, else in order).
    init?(related multipart: MultipartBody) throws {
        guard let first = multipart.parts.first else { return nil }
        guard case .object(let members) = try JSONValue(parsing: first.body) else { return nil }
        var following = (members["_attachments"]?.objectValue ?? [:])
            .filter { $0.value["follows"]?.boolValue == true }.keys.sorted()
        var bodies: [String: Blob] = [:]
        for part in multipart.parts.dropFirst() {
            guard let name = part.filename.flatMap({ following.contains($0) ? $0 : nil }) ?? following.first else { break }
            bodies[name] = Blob(contentType: part.contentType?.mediaType ?? "application/octet-stream", data: Data(part.body))
            following.removeAll { $0 == name }
        }
        try self.init(wireBody: members, following: bodies)
    }

    /// Whether an attachment to send is too large to travel inline.
    var hasLargeAttachment: Bool {
        attachments.values.contains { $0.length > UInt64(Self.inlineAttachmentLimit) }
    }

    /// The JSON `_bulk_docs` with `new_edits=false` takes: `_revisions`, and the attachments to send as base64
    /// `data` (the others stay stubs).
    var wireBody: JSONValue {
        var body = headerMembers
        if var entries = body["_attachments"]?.objectValue {
            for (name, blob) in attachments {
                guard var metadata = entries[name]?.objectValue, let content = blob.content else { continue }
                metadata["stub"] = nil
                metadata["data"] = .string(content.base64EncodedString())
                entries[name] = .object(metadata)
            }
            body["_attachments"] = .object(entries)
        }
        return .object(body)
    }

    /// The revision as a `multipart/related` body streamed as the request goes out (replication-protocol.md §8.2):
    /// the JSON (`_attachments` to send marked `follows`), then each attachment as a binary part named after it,
    /// read from its blob in 64 KiB chunks, so a large blob is never whole in memory.
    ///
    /// - Returns: The `Content-Type` and the bytes.
    var streamedMultipartRelated: (contentType: String, bytes: AsyncThrowingStream<ByteBuffer, any Error>) {
        var body = headerMembers
        var files: [(name: String, blob: Blob)] = []
        if var entries = body["_attachments"]?.objectValue {
            for (name, blob) in attachments.sorted(by: { $0.key < $1.key }) {
                guard var metadata = entries[name]?.objectValue else { continue }
                metadata["stub"] = nil
                metadata["follows"] = true
                entries[name] = .object(metadata)
                files.append((name, blob))
            }
            body["_attachments"] = .object(entries)
        }
        let framing = MultipartBody(subtype: "related", parts: [])
        let boundary = framing.boundary
        let json = JSONValue.object(body).serialized()
        let sending = files
        let bytes = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
            let producer = Task.detached {
                do {
                    continuation.yield(ByteBuffer(bytes: Self.partHead(boundary, MIMEPart.json(.object([:])).headers)))
                    continuation.yield(ByteBuffer(bytes: json))
                    for (name, blob) in sending {
                        let head = MIMEPart(body: [], contentType: blob.contentType ?? "application/octet-stream", filename: name)
                        continuation.yield(ByteBuffer(bytes: Array("\r\n".utf8) + Self.partHead(boundary, head.headers)))
                        guard let stream = blob.contentStream else {
                            throw CouchetteError(.notFound, message: "The content of attachment \"\(name)\" is missing")
                        }
                        stream.open()
                        defer { stream.close() }
                        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
                        while true {
                            try Task.checkCancellation()
                            let count = stream.read(&chunk, maxLength: chunk.count)
                            if count < 0 { throw stream.streamError ?? CouchetteError(.io, message: "Reading \"\(name)\" failed") }
                            if count == 0 { break }
                            continuation.yield(ByteBuffer(bytes: chunk[..<count]))
                        }
                    }
                    continuation.yield(ByteBuffer(string: "\r\n--\(boundary)--\r\n"))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
        return (framing.contentType, bytes)
    }

    /// `--boundary`, a part's headers and the blank line before its body.
    private static func partHead(_ boundary: String, _ headers: HTTPFields) -> [UInt8] {
        var text = "--\(boundary)\r\n"
        for field in headers { text += "\(field.name.rawName): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The body with `_id`, `_rev`, `_revisions` and `_deleted`.
    private var headerMembers: [String: JSONValue] {
        var body = self.body
        body["_id"] = .string(documentID)
        body["_rev"] = .string(revisionID)
        if isDeleted { body["_deleted"] = true }
        // `_revisions` cannot tell of a gap (a history joined to an older revision): it ends before the first one.
        if let revisions = RevisionHistory(leadingRunOf: history.compactMap { try? RevisionID(parsing: $0) }) {
            body["_revisions"] = revisions.json
        }
        return body
    }
}
