import CouchetteCore

// MARK: - MultipartDocument

/// A document revision received as `multipart/related` (replication-protocol.md §8.2): the JSON body from the
/// first part, and the bytes of each attachment marked `"follows": true` from the later parts.
///
/// Parts are matched to attachments by `Content-Disposition` filename (Couchbase Lite), then by digest (SHA-1 or
/// MD5 of the part, as Sync Gateway does), then in the order the JSON lists them (CouchDB).
///
/// ```swift
/// let multipart = try MultipartBody(parsing: bytes, contentType: contentType)
/// let document = try MultipartDocument(multipart)
/// try store.put(id: "doc", body: document.body, attachmentBodies: document.attachmentBodies)
/// ```
struct MultipartDocument: Sendable, Hashable {
    /// The JSON body, with `follows` attachment entries as sent.
    var body: JSONValue
    /// The bytes of the `follows` attachments, by name.
    var attachmentBodies: [String: [UInt8]]

    /// Creates a document from its parts; a JSON body alone has no attachment bodies.
    init(body: JSONValue, attachmentBodies: [String: [UInt8]] = [:]) {
        self.body = body
        self.attachmentBodies = attachmentBodies
    }

    /// Reads a `multipart/related` document.
    ///
    /// - Throws: 400 when the first part is not a JSON object, or the parts do not match the `follows`
    ///   attachments one to one.
    init(_ multipart: MultipartBody) throws(GatewayError) {
        guard let first = multipart.parts.first else { throw .badRequest("Missing JSON part in multipart body") }
        if let type = first.contentType?.mediaType, type != "application/json" {
            throw .badRequest("The first MIME part must be application/json, not \(type)")
        }
        let json = try AttachmentEncoding.decode(first.body, encoding: first.headers[.contentEncoding])
        let body = try RequestBody.parse(json)
        guard case .object(let members) = body else { throw .badRequest("Document body must be a JSON object") }

        var pending = (members["_attachments"]?.objectValue ?? [:])
            .filter { $0.value["follows"] == true }
            .map { (name: $0.key, digest: $0.value["digest"]?.stringValue) }
            .sorted { JSONValue.keyOrder($0.name, $1.name) }
        let expected = pending.count
        let attachmentParts = multipart.parts.dropFirst()
        guard attachmentParts.count <= expected else {
            throw .badRequest("Too many MIME parts (expected \(expected + 1))")
        }
        guard attachmentParts.count == expected else {
            throw .badRequest(
                "Too few MIME parts: expected \(expected) attachments, got \(attachmentParts.count)")
        }
        var bodies: [String: [UInt8]] = [:]
        for part in attachmentParts {
            let index =
                pending.firstIndex { $0.name == part.filename }
                ?? pending.firstIndex { entry in
                    entry.digest.flatMap { try? AttachmentDigest(parsing: $0) }?.matches(part.body) ?? false
                }
                ?? pending.startIndex
            bodies[pending[index].name] = part.body
            pending.remove(at: index)
        }
        self.body = body
        self.attachmentBodies = bodies
    }
}
