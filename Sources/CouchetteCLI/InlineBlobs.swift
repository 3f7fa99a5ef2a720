import Couchette
import CouchetteCore
import Foundation

// MARK: - InlineBlobs

/// Blobs in exported documents: an export carries each blob's content inline as base64 `data`, as CouchDB's
/// `attachments=true` does, so that a file or folder holds everything a database held; an import stores that content
/// in the destination and keeps the blob dictionary without it.
///
/// A blob is a Couchbase Lite 3 blob dictionary (`{"@type":"blob","digest":…}`) anywhere in a document, or an entry of
/// its `_attachments` (the 1.x API's).
///
/// ```swift
/// let exported = try InlineBlobs.inlined(members, of: "photo", from: database)
/// // ["image": ["@type": "blob", "digest": "sha1-…", "length": 4, "content_type": "image/png", "data": "iVBO"]]
/// let stored = try InlineBlobs.stored(exported, of: "photo", into: other)   // content saved, `data` gone
/// ```
enum InlineBlobs {
    /// `members` with the content of each blob inline.
    ///
    /// - Throws: ``CLIError/failed(_:)`` naming the document when a blob's content is not in `database`.
    static func inlined(_ members: [String: JSONValue], of id: String, from database: Database) throws
        -> [String: JSONValue]
    {
        try transformBlobs(in: members) { blob in
            guard let content = try database.getBlob(properties: lookupProperties(blob))?.content else {
                throw CLIError.failed(
                    "Document \"\(id)\": the content of blob \(blob["digest"]?.stringValue ?? "?") is missing "
                        + "from the database (couchette check says more); nothing is exported without it.")
            }
            var inlined = blob
            inlined["data"] = .string(content.base64EncodedString())
            inlined["stub"] = nil
            inlined["follows"] = nil
            return inlined
        }
    }

    /// `members` with each blob's inline content stored in `database` and left out of the dictionary; a blob without
    /// inline content must be stored there already.
    ///
    /// - Throws: ``CLIError/failed(_:)`` naming the document when inline content is not base64 or does not match its
    ///   digest or length, or when a blob's content is neither in the file nor in `database`.
    static func stored(_ members: [String: JSONValue], of id: String, into database: Database) throws
        -> [String: JSONValue]
    {
        try transformBlobs(in: members) { blob in
            let digest = blob["digest"]?.stringValue ?? "?"
            var stored = blob
            stored["data"] = nil
            stored["follows"] = nil
            guard case .string(let base64)? = blob["data"] else {
                guard try database.getBlob(properties: lookupProperties(blob)) != nil else {
                    throw CLIError.failed(
                        "Document \"\(id)\": blob \(digest) has no content in the file and none in the database.")
                }
                return stored
            }
            guard let data = Data(base64Encoded: base64) else {
                throw CLIError.failed("Document \"\(id)\": the data of blob \(digest) is not base64.")
            }
            let content = Blob(contentType: blob["content_type"]?.stringValue ?? "application/octet-stream", data: data)
            guard content.digest == digest, blob["length"]?.intValue.map({ Int($0) == data.count }) ?? true else {
                throw CLIError.failed("Document \"\(id)\": the data of blob \(digest) does not match its digest or length.")
            }
            try database.saveBlob(blob: content)
            stored["length"] = .int(Int64(data.count))
            return stored
        }
    }

    // MARK: - Walking

    /// `members` with `transform` applied to each blob dictionary, and to each `_attachments` entry.
    private static func transformBlobs(
        in members: [String: JSONValue], _ transform: ([String: JSONValue]) throws -> [String: JSONValue]
    ) throws -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (key, value) in members {
            if key == "_attachments", case .object(let entries) = value {
                var transformed: [String: JSONValue] = [:]
                for (name, entry) in entries {
                    guard case .object(let attachment) = entry, attachment["digest"]?.stringValue != nil else {
                        transformed[name] = entry
                        continue
                    }
                    var done = try transform(attachment)
                    // An entry without its content is a stub.
                    if done["data"] == nil { done["stub"] = true } else { done["stub"] = nil }
                    transformed[name] = .object(done)
                }
                result[key] = .object(transformed)
            } else {
                result[key] = try transformValue(value, transform)
            }
        }
        return result
    }

    private static func transformValue(
        _ value: JSONValue, _ transform: ([String: JSONValue]) throws -> [String: JSONValue]
    ) throws -> JSONValue {
        switch value {
        case .object(let members) where members["@type"] == "blob" && members["digest"]?.stringValue != nil:
            return .object(try transform(members))
        case .object(let members):
            return .object(try members.mapValues { try transformValue($0, transform) })
        case .array(let items):
            return .array(try items.map { try transformValue($0, transform) })
        default:
            return value
        }
    }

    /// A blob dictionary as ``Database/getBlob(properties:)`` takes it (an `_attachments` entry has no `@type`), without
    /// inline data.
    private static func lookupProperties(_ blob: [String: JSONValue]) -> [String: Any] {
        var properties: [String: Any] = ["@type": "blob"]
        if let digest = blob["digest"]?.stringValue { properties["digest"] = digest }
        if let type = blob["content_type"]?.stringValue { properties["content_type"] = type }
        if let length = blob["length"]?.intValue { properties["length"] = Int(length) }
        return properties
    }
}
