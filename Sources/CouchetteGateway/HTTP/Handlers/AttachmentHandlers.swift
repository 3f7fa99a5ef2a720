import CouchetteCore
import Foundation
import Hummingbird

// MARK: - AttachmentHandlers

/// `/{db}/{doc}/{attachment}` (spec: gateway-rest-api.md §6): read an attachment's bytes, add or replace one,
/// remove one. Attachment names containing `/` arrive percent-encoded (`%2F`) and are decoded after routing.
struct AttachmentHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET / HEAD

    /// `GET /{db}/{doc}/{attachment}?rev=`: the raw bytes with `Content-Type`, `Etag: "<digest>"` and
    /// `Accept-Ranges: bytes`; a `Range: bytes=a-b` gets 206 with `Content-Range` (416 when unsatisfiable);
    /// `If-None-Match` with the digest gets 304. The admin listener adds `Content-Disposition`.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try DocumentHandlers.documentID(from: context)
        let name = try Self.attachmentName(from: context)
        let revision = try QueryOptions(request).string("rev").map { text throws(GatewayError) in
            try DocumentValidation.parseRevision(text)
        }
        let content = try await target.attachment(named: name, documentID: id, revision: revision)
        var headers = HTTPFields()
        let etag = "\"\(content.metadata.digest?.description ?? "")\""
        headers[.eTag] = etag
        headers[.acceptRanges] = "bytes"
        if request.headers[.ifNoneMatch] == etag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = content.metadata.contentType
        if environment.isAdmin {
            headers[.contentDisposition] = HeaderValue("attachment", parameters: ["filename": name]).description
        }
        if let range = try AttachmentByteRange(header: request.headers[.range], length: content.data.count) {
            headers[.contentRange] = range.contentRange
            let slice = content.data[range.bounds]
            return Response(
                status: .partialContent, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: slice)))
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content.data)))
    }

    // MARK: - PUT

    /// `PUT /{db}/{doc}/{attachment}?rev=` (or `If-Match`): the raw body becomes the attachment (with the
    /// request's `Content-Type`, default `application/octet-stream`) in a new revision keeping the rest of the
    /// document → 201 `{"ok":true,"id","rev"}`. Without a revision an absent document is created.
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try DocumentHandlers.documentID(from: context)
        let name = try Self.attachmentName(from: context)
        let data = try await environment.body.bytes(of: request)
        let contentType = request.headers[.contentType].flatMap { $0.isEmpty ? nil : $0 }
            ?? AttachmentMetadata.defaultContentType
        let parent = QueryOptions(request).string("rev") ?? DocumentHandlers.ifMatch(request)
        let revision = try target.putAttachment(
            named: name, documentID: id, data: data, contentType: contentType, parentRevision: parent)
        return DocumentHandlers.saved(id: id, revision: revision, status: .created, environment: environment)
    }

    // MARK: - DELETE

    /// `DELETE /{db}/{doc}/{attachment}?rev=` (or `If-Match`): a new revision without the attachment
    /// (CouchDB's endpoint) → 200 `{"ok":true,"id","rev"}`; 409 without a revision.
    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try DocumentHandlers.documentID(from: context)
        let name = try Self.attachmentName(from: context)
        guard let parent = QueryOptions(request).string("rev") ?? DocumentHandlers.ifMatch(request) else {
            throw GatewayError.conflict("Document update conflict")
        }
        let revision = try target.deleteAttachment(named: name, documentID: id, parentRevision: parent)
        return DocumentHandlers.saved(id: id, revision: revision, status: .ok, environment: environment)
    }

    // MARK: - Helpers

    /// The percent-decoded `{attachment}` segment (`%2F` becomes `/`).
    static func attachmentName(from context: GatewayRequestContext) throws(GatewayError) -> String {
        try context.pathSegment("attachment")
    }
}
