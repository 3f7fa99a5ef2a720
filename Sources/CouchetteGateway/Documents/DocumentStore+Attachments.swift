import CouchetteCore

// MARK: - Attachments

extension DocumentStore {
    // MARK: Reading

    /// One attachment of a revision with its bytes (`GET /{db}/{doc}/{attachment}`, gateway-rest-api.md §6).
    ///
    /// ```swift
    /// let content = try store.attachment(named: "photo.jpg", documentID: "doc", as: caller)
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attachment's name.
    ///   - id: The document ID.
    ///   - revision: The revision; the current one when nil.
    ///   - caller: Who reads; they must see the revision's channels, as for the document.
    /// - Throws: 404 `missing`/`deleted` for the document or revision, 404 `missing attachment <name>`,
    ///   403 `forbidden` outside the caller's channels.
    public func attachment(
        named name: String, documentID id: String, revision: RevisionID? = nil, as caller: Caller
    ) async throws(GatewayError) -> AttachmentContent {
        let snapshots = try await storage.fetchDocuments(ids: [id], winnerAsText: false)
        let (document, node) = try storedRevision(id: id, revision: revision, in: snapshots)
        guard caller.canSee(document.visibilityChannels(of: node.id)) else { throw .forbidden("forbidden") }
        guard let entry = node.body?["_attachments"]?[name], let metadata = try? AttachmentMetadata(json: entry) else {
            throw .notFound("missing attachment \(name)")
        }
        guard let digest = metadata.digest, let data = try await storage.fetchAttachment(digest: digest.description)
        else {
            throw .internalError("Attachment \"\(name)\" is missing from storage")
        }
        return AttachmentContent(name: name, metadata: metadata, data: data, revision: node.id)
    }

    // MARK: Writing

    /// Adds or replaces one attachment in a new revision that keeps the rest of the parent's body
    /// (`PUT /{db}/{doc}/{attachment}`, gateway-rest-api.md §6).
    ///
    /// Without a parent on a document that does not exist (or is deleted), a new revision with an empty body
    /// and the attachment is created, as CouchDB and Sync Gateway do.
    ///
    /// ```swift
    /// let rev = try store.putAttachment(
    ///     named: "note.txt", documentID: "doc", data: Array("hi".utf8), contentType: "text/plain",
    ///     parentRevision: "1-abc")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The attachment's name (non-empty).
    ///   - id: The document ID.
    ///   - data: The bytes.
    ///   - contentType: The MIME type to record.
    ///   - parentRevision: The revision to update (`?rev=` or `If-Match`).
    ///   - caller: Who writes; they must see the parent revision's channels.
    /// - Returns: The new revision's ID.
    /// - Throws: 400 for bad names or revisions, 403, 409 as for ``put(id:body:parentRevision:attachmentBodies:)``.
    @discardableResult
    public func putAttachment(
        named name: String, documentID id: String, data: [UInt8],
        contentType: String = AttachmentMetadata.defaultContentType, parentRevision: String?, as caller: Caller = .admin
    ) throws(GatewayError) -> RevisionID {
        try DocumentValidation.checkDocumentID(id)
        guard DocumentValidation.isValidAttachmentName(name) else { throw .badRequest("Invalid attachment name") }
        let parent = try parentRevision.map { text throws(GatewayError) in try DocumentValidation.parseRevision(text) }
        var members = try editableBody(documentID: id, parent: parent, as: caller)
        var entries = members["_attachments"]?.objectValue ?? [:]
        entries[name] = ["content_type": .string(contentType), "length": .int(Int64(data.count)), "follows": true]
        members["_attachments"] = .object(entries)
        return try put(
            id: id, body: .object(members), parentRevision: parentRevision, attachmentBodies: [name: data],
            user: caller.syncContext)
    }

    /// Removes one attachment by writing a new revision without it (CouchDB's `DELETE /{db}/{doc}/{attachment}`).
    ///
    /// - Parameters:
    ///   - name: The attachment's name.
    ///   - id: The document ID.
    ///   - parentRevision: The revision to update (`?rev=` or `If-Match`).
    ///   - caller: Who writes; they must see the parent revision's channels.
    /// - Returns: The new revision's ID.
    /// - Throws: 404 `missing attachment <name>` when the parent lacks it; otherwise as
    ///   ``put(id:body:parentRevision:attachmentBodies:)``.
    @discardableResult
    public func deleteAttachment(
        named name: String, documentID id: String, parentRevision: String, as caller: Caller = .admin
    ) throws(GatewayError) -> RevisionID {
        try DocumentValidation.checkDocumentID(id)
        let parent = try DocumentValidation.parseRevision(parentRevision)
        var members = try editableBody(documentID: id, parent: parent, as: caller)
        guard var entries = members["_attachments"]?.objectValue, entries[name] != nil else {
            throw .notFound("missing attachment \(name)")
        }
        entries[name] = nil
        members["_attachments"] = entries.isEmpty ? nil : .object(entries)
        return try put(id: id, body: .object(members), parentRevision: parentRevision, user: caller.syncContext)
    }

    /// The stored body (user properties and attachment stubs) an attachment edit starts from: the parent's, or
    /// the current revision's without a parent; empty for an absent or deleted document or an unknown parent
    /// (the write then fails or creates the document, as ``put(id:body:parentRevision:attachmentBodies:)`` decides).
    private func editableBody(documentID id: String, parent: RevisionID?, as caller: Caller) throws(GatewayError)
        -> [String: JSONValue]
    {
        guard let document = try storage.document(id: id),
            let node = parent.map({ document.tree[$0] }) ?? document.winner,
            !node.isDeleted, let body = node.body?.objectValue
        else { return [:] }
        guard caller.canSee(document.visibilityChannels(of: node.id)) else { throw .forbidden("forbidden") }
        return body
    }

    // MARK: Resolving a new revision's attachments

    /// A local edit's `_attachments` with the stub fields of entries that carry inline `data` removed: PouchDB and
    /// CouchDB clients replace an attachment by setting `data` on the object they read, which still holds the old
    /// `stub`, `length`, `digest` and `revpos`; as in CouchDB the new data wins. (Revisions made elsewhere keep
    /// every field: their digest and length check what arrived.)
    static func droppingStaleStubFields(_ attachments: JSONValue) -> JSONValue {
        guard case .object(var entries) = attachments else { return attachments }
        for (name, entry) in entries {
            guard case .object(var fields) = entry, fields["data"] != nil, fields["encoding"] == nil else { continue }
            for key in ["stub", "length", "digest", "revpos"] { fields[key] = nil }
            entries[name] = .object(fields)
        }
        return .object(entries)
    }

    /// Turns a new revision's `_attachments` into stored stubs (replication-protocol.md §9.2): inline `data` and
    /// `follows` bodies are decoded, checked against their digest and length and named by SHA-1 digest (returned,
    /// to be stored when the revision commits); stubs must name an attachment of the parent (same name, same digest
    /// if given) or a stored digest.
    ///
    /// - Parameters:
    ///   - body: The stored body (user properties and `_attachments`).
    ///   - generation: The new revision's generation: the `revpos` of new and changed attachments.
    ///   - parentBody: The parent's (or nearest known ancestor's) body, to resolve stubs by name.
    ///   - bodies: The bytes of `follows` attachments, by name.
    ///   - keepingIncomingRevpos: Keep a valid incoming `revpos` (revisions made elsewhere) instead of
    ///     `generation`.
    ///   - storage: Where stubs' attachments are looked up: the storage, or the transaction an edit runs in (which
    ///     sees attachments stored earlier in it).
    /// - Returns: The body to store, and the bodies of the attachments it brings by digest.
    /// - Throws: 400 for malformed metadata, missing or mismatched bodies and unknown stubs.
    func resolveAttachments(
        _ body: JSONValue, generation: Int, parentBody: JSONValue?, bodies: [String: [UInt8]],
        keepingIncomingRevpos: Bool, in storage: any GatewayStorage
    ) throws(GatewayError) -> (body: JSONValue, attachments: [String: [UInt8]]) {
        guard case .object(var members) = body, var attachmentsJSON = members["_attachments"] else {
            return (body, [:])
        }
        if !keepingIncomingRevpos { attachmentsJSON = Self.droppingStaleStubFields(attachmentsJSON) }
        let attachments: [String: AttachmentMetadata]
        do { attachments = try AttachmentMetadata.parseAll(attachmentsJSON) } catch {
            throw .badRequest(error.message)
        }
        let parentAttachments = parentBody?["_attachments"]?.objectValue ?? [:]
        var resolved: [String: JSONValue] = [:]
        var brought: [String: [UInt8]] = [:]
        for (name, metadata) in attachments {
            if let sent = metadata.data ?? (metadata.follows ? bodies[name] : nil) {
                let data = try Self.checkedContent(sent, of: metadata, named: name)
                let digest = AttachmentDigest.sha1(of: data).description
                brought[digest] = data
                var revpos = generation
                if keepingIncomingRevpos, let incoming = metadata.revpos, (1...generation).contains(incoming) {
                    revpos = incoming
                }
                resolved[name] = AttachmentMetadata(
                    contentType: metadata.contentType, length: data.count,
                    digest: try? AttachmentDigest(parsing: digest), revpos: revpos, isStub: true
                ).json
            } else if metadata.follows {
                throw .badRequest("Missing body of attachment \"\(name)\"")
            } else if metadata.isStub {
                resolved[name] = try Self.resolveStub(
                    metadata, named: name, parentAttachments: parentAttachments, in: storage)
            } else {
                throw .badRequest("Attachment \"\(name)\" has no data")
            }
        }
        members["_attachments"] = resolved.isEmpty ? nil : .object(resolved)
        return (.object(members), brought)
    }

    /// A stub's stored entry: the parent's attachment of that name, or the stub itself when its digest is stored.
    ///
    /// Attachments are stored by SHA-1 digest; a CouchDB peer names them by MD5 (`md5-…`), so a stub whose digest
    /// is of another algorithm than the parent's is checked against the parent's bytes.
    private static func resolveStub(
        _ metadata: AttachmentMetadata, named name: String, parentAttachments: [String: JSONValue],
        in storage: any GatewayStorage
    ) throws(GatewayError) -> JSONValue {
        if let parent = parentAttachments[name] {
            let parentDigest = parent["digest"]?.stringValue
            guard let digest = metadata.digest, parentDigest != digest.description else { return parent }
            if let parentDigest, (try? AttachmentDigest(parsing: parentDigest))?.algorithm != digest.algorithm,
                let data = try storage.attachment(digest: parentDigest), digest.matches(data)
            {
                return parent
            }
        }
        if let digest = metadata.digest, let data = try storage.attachment(digest: digest.description) {
            var stub = metadata.stub
            stub.length = data.count
            stub.encoding = nil
            stub.encodedLength = nil
            return stub.json
        }
        throw .badRequest("Unknown attachment stub \"\(name)\"")
    }

    /// The decoded bytes of a sent attachment, checked against its `digest` (of the sent or the decoded bytes)
    /// and `length` (of the decoded bytes).
    private static func checkedContent(_ sent: [UInt8], of metadata: AttachmentMetadata, named name: String)
        throws(GatewayError) -> [UInt8]
    {
        let data = try AttachmentEncoding.decode(sent, encoding: metadata.encoding)
        if let digest = metadata.digest, !digest.matches(sent), !digest.matches(data) {
            throw .badRequest("Attachment \"\(name)\" does not match its digest")
        }
        if let length = metadata.length, length != data.count {
            throw .badRequest("Attachment \"\(name)\" does not match its length")
        }
        return data
    }
}
