import CouchetteCore

// MARK: - BlobAttachments

/// Couchbase Lite 3 blobs on the CouchDB replication protocol, which carries content only as `_attachments`: each
/// blob dictionary (`{"@type":"blob","digest",…}`, anywhere in the body) travels as an attachment named
/// `blob_<JSON pointer>` (`blob_/image`, `blob_/photos/0`) while the dictionary stays in the body, as Couchbase Lite 3
/// and Sync Gateway do. A receiver folds those entries back: their content goes into its blob store and the body keeps
/// only the dictionary.
///
/// ```swift
/// var body: [String: JSONValue] = ["image": ["@type": "blob", "digest": "sha1-…", "length": 10]]
/// let exposed = BlobAttachments.expose(&body) { _, _ in 1 }   // body["_attachments"]?["blob_/image"] is a stub
/// BlobAttachments.fold(&body)                              // back to the dictionary alone
/// ```
enum BlobAttachments {
    /// The prefix of the attachment names that stand for blobs.
    static let namePrefix = "blob_"

    /// One step of a path into a body.
    enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    /// Every blob dictionary of `body` (not under `_attachments`, not inside another blob), by attachment name.
    static func references(in body: [String: JSONValue]) -> [String: [String: JSONValue]] {
        var found: [String: [String: JSONValue]] = [:]
        for (key, value) in body where key != "_attachments" {
            collect(value, path: [.key(key)], into: &found)
        }
        return found
    }

    private static func collect(_ value: JSONValue, path: [Step], into found: inout [String: [String: JSONValue]]) {
        switch value {
        case .object(let members):
            if isBlob(members) {
                found[namePrefix + pointer(path)] = members
                return
            }
            for (key, member) in members { collect(member, path: path + [.key(key)], into: &found) }
        case .array(let elements):
            for (index, element) in elements.enumerated() { collect(element, path: path + [.index(index)], into: &found) }
        default:
            break
        }
    }

    /// Whether a dictionary is a blob's: `@type` `blob` and a string `digest`.
    static func isBlob(_ members: [String: JSONValue]) -> Bool {
        members["@type"] == "blob" && members["digest"]?.stringValue != nil
    }

    /// Adds to `body`'s `_attachments` a stub for each of its blobs: `digest`, `length`, `content_type`, `revpos`
    /// (from `revpos`, given the attachment name and the digest) and `stub`; returns the blobs by attachment name.
    @discardableResult
    static func expose(
        _ body: inout [String: JSONValue], revpos: (_ name: String, _ digest: String) -> Int
    ) -> [String: [String: JSONValue]] {
        let blobs = references(in: body)
        guard !blobs.isEmpty else { return blobs }
        var attachments = body["_attachments"]?.objectValue ?? [:]
        for (name, blob) in blobs {
            var entry = blob.filter { $0.key != "@type" && $0.key != "stub" && $0.key != "data" }
            entry["stub"] = true
            entry["revpos"] = .int(Int64(revpos(name, blob["digest"]?.stringValue ?? "")))
            attachments[name] = .object(entry)
        }
        body["_attachments"] = .object(attachments)
        return blobs
    }

    /// Removes the `blob_` entries of `body`'s `_attachments`: an entry whose pointer leads to a blob dictionary goes
    /// (the dictionary takes the entry's `digest`, `length` and `content_type` when they differ), as does one in
    /// Couchbase Lite 2.0's numbered form (`blob_1`) whose digest a blob of the body has; other attachments (a
    /// `blob_2019.jpg` too) stay. An `_attachments` left empty goes too.
    static func fold(_ body: inout [String: JSONValue]) {
        guard var attachments = body["_attachments"]?.objectValue else { return }
        var changed = false
        lazy var digests = Set(references(in: body).values.compactMap { $0["digest"]?.stringValue })
        for (name, entry) in attachments where name.hasPrefix(namePrefix) {
            let rest = name.dropFirst(namePrefix.count)
            if !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }) {
                // Couchbase Lite 2.0's numbered form, dropped only when a blob of the body holds its content.
                if let digest = entry["digest"]?.stringValue, digests.contains(digest) {
                    attachments[name] = nil
                    changed = true
                }
                continue
            }
            guard rest.first == "/", let path = steps(String(rest)), !path.isEmpty,
                case .object(let blob)? = value(at: path, in: body), isBlob(blob)
            else { continue }
            attachments[name] = nil
            changed = true
            guard let metadata = entry.objectValue, metadata["digest"] != blob["digest"] else { continue }
            update(&body, at: path) { blob in
                for key in ["digest", "length", "content_type"] { blob[key] = metadata[key] ?? blob[key] }
            }
        }
        guard changed else { return }
        body["_attachments"] = attachments.isEmpty ? nil : .object(attachments)
    }

    // MARK: - JSON pointers (RFC 6901)

    /// `/photos/0` for `photos`, `0`; `~` and `/` in keys escaped as `~0` and `~1`.
    static func pointer(_ path: [Step]) -> String {
        path.map { step in
            switch step {
            case .key(let key): "/" + key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            case .index(let index): "/\(index)"
            }
        }.joined()
    }

    /// The steps of a pointer; each segment is a key, or also an index when it is a decimal number.
    private static func steps(_ pointer: String) -> [String]? {
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    private static func value(at path: [String], in body: [String: JSONValue]) -> JSONValue? {
        var current: JSONValue? = .object(body)
        for segment in path {
            switch current {
            case .object(let members)?: current = members[segment]
            case .array(let elements)?:
                guard let index = Int(segment), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default: return nil
            }
        }
        return current
    }

    private static func update(
        _ body: inout [String: JSONValue], at path: [String], _ change: (inout [String: JSONValue]) -> Void
    ) {
        var root = JSONValue.object(body)
        update(&root, at: path[...], change)
        body = root.objectValue ?? body
    }

    private static func update(
        _ value: inout JSONValue, at path: ArraySlice<String>, _ change: (inout [String: JSONValue]) -> Void
    ) {
        guard let segment = path.first else {
            if case .object(var members) = value {
                change(&members)
                value = .object(members)
            }
            return
        }
        switch value {
        case .object(var members):
            guard var member = members[segment] else { return }
            update(&member, at: path.dropFirst(), change)
            members[segment] = member
            value = .object(members)
        case .array(var elements):
            guard let index = Int(segment), elements.indices.contains(index) else { return }
            update(&elements[index], at: path.dropFirst(), change)
            value = .array(elements)
        default:
            break
        }
    }
}
