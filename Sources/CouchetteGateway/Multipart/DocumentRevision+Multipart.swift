import CouchetteCore
import HTTPTypes

// MARK: - Multipart forms of a revision

extension DocumentRevision {
    /// The largest attachment body sent inline as base64 in a multipart response; larger ones follow as MIME
    /// parts (Sync Gateway's 200 bytes, replication-protocol.md §9.3).
    static let inlineAttachmentLimit = 200

    /// The revision as `multipart/related`: the JSON body first, then one part per attachment larger than
    /// `inlineLimit` (`"follows": true` in the JSON), with `Content-Type` and
    /// `Content-Disposition: attachment; filename="…"`, in the JSON's attachment order.
    ///
    /// ```swift
    /// let body = revision.multipartRelated()
    /// body.parts.count   // 1 + the attachments that follow
    /// ```
    func multipartRelated(inlineLimit: Int = DocumentRevision.inlineAttachmentLimit) -> MultipartBody {
        let (json, following) = body(inliningAttachmentsUpTo: inlineLimit)
        var parts = [MIMEPart.json(json)]
        for name in following {
            guard let data = attachmentBodies[name] else { continue }
            let contentType = json["_attachments"]?[name]?["content_type"]?.stringValue
                ?? AttachmentMetadata.defaultContentType
            parts.append(MIMEPart(body: data, contentType: contentType, filename: name))
        }
        return MultipartBody(subtype: "related", parts: parts)
    }

    /// The revision as one part of a `multipart/mixed` response (`open_revs`, `_bulk_get`): JSON, or a nested
    /// `multipart/related` when attachment bodies are included; with `X-Doc-ID` and `X-Rev-ID` headers.
    func mixedPart(inlineLimit: Int = DocumentRevision.inlineAttachmentLimit) -> MIMEPart {
        var part =
            attachmentBodies.isEmpty
            ? MIMEPart.json(body) : MIMEPart(nested: multipartRelated(inlineLimit: inlineLimit))
        if let documentID { part.headers[Self.documentIDHeader] = documentID }
        if let revisionID { part.headers[Self.revisionIDHeader] = revisionID }
        return part
    }

    /// `X-Doc-ID`, a `multipart/mixed` revision part's document ID.
    static let documentIDHeader = HTTPField.Name("X-Doc-ID")!
    /// `X-Rev-ID`, a `multipart/mixed` revision part's revision ID.
    static let revisionIDHeader = HTTPField.Name("X-Rev-ID")!
}

// MARK: - OpenRevision

extension OpenRevision {
    /// The result as one part of a `multipart/mixed` `open_revs` response: the revision, or
    /// `{"missing": rev}` as an error part.
    var mixedPart: MIMEPart {
        switch self {
        case .found(let revision): revision.mixedPart()
        case .missing: MIMEPart.jsonError(json)
        }
    }
}
