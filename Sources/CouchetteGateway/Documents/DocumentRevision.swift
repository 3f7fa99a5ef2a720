import CouchetteCore
import Foundation

// MARK: - DocumentRevision

/// One revision as read for a caller: its JSON body and the attachment bodies the read included
/// (`attachments=true`, spec: gateway-rest-api.md §5.1).
///
/// The body keeps attachment metadata only: entries whose bytes are in ``attachmentBodies`` carry `content_type`,
/// `digest`, `length` and `revpos` without `stub`; the others are stubs. ``json`` inlines the bytes as base64
/// `data` (the JSON response); the multipart writer sends the larger ones as MIME parts instead.
///
/// ```swift
/// let revision = try store.revision(id: "doc", as: .admin, options: ReadOptions(includeAttachments: true))
/// revision.attachmentBodies["photo.jpg"]   // the bytes
/// revision.json["_attachments"]?["photo.jpg"]?["data"]   // the same, base64
/// ```
public struct DocumentRevision: Sendable, Hashable {
    /// The body with `_id`, `_rev` and the members the read asked for.
    public var body: JSONValue
    /// The bytes of the attachments the read included, by name.
    public var attachmentBodies: [String: [UInt8]]

    /// Creates a revision.
    public init(body: JSONValue, attachmentBodies: [String: [UInt8]] = [:]) {
        self.body = body
        self.attachmentBodies = attachmentBodies
    }

    /// The document ID (`_id`).
    public var documentID: String? { body["_id"]?.stringValue }

    /// The revision ID (`_rev`).
    public var revisionID: String? { body["_rev"]?.stringValue }

    /// Whether the body is the redacted stub of a revision outside the caller's channels (`_removed: true`).
    public var isRedacted: Bool { body["_removed"] == true }

    /// The JSON form: every included attachment body inline as base64 `data`.
    public var json: JSONValue {
        body(inliningAttachmentsUpTo: .max).body
    }

    /// The body with attachment bodies up to `inlineLimit` bytes inline as base64 `data`, and the larger ones
    /// marked `"follows": true` (replication-protocol.md §9.3).
    ///
    /// - Parameter inlineLimit: The largest body inlined, in bytes (Sync Gateway inlines up to 200).
    /// - Returns: The body, and the names of the attachments that follow, sorted as the body's keys are
    ///   serialized, so MIME parts can be written in the JSON's attachment order.
    public func body(inliningAttachmentsUpTo inlineLimit: Int) -> (body: JSONValue, following: [String]) {
        guard !attachmentBodies.isEmpty, case .object(var members) = body,
            case .object(var entries)? = members["_attachments"]
        else { return (body, []) }
        var following: [String] = []
        for (name, data) in attachmentBodies {
            guard case .object(var entry)? = entries[name] else { continue }
            entry["stub"] = nil
            if data.count > inlineLimit {
                entry["follows"] = true
                following.append(name)
            } else {
                entry["data"] = .string(Data(data).base64EncodedString())
            }
            entries[name] = .object(entry)
        }
        members["_attachments"] = .object(entries)
        return (.object(members), following.sorted(by: JSONValue.keyOrder))
    }
}

// MARK: - Key order

extension JSONValue {
    /// The order serialized objects list their keys in: by Unicode code point (decisions.md, JSON key order).
    static func keyOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.unicodeScalars.lexicographicallyPrecedes(rhs.unicodeScalars)
    }
}
