import CouchetteCore
import Foundation

// MARK: - Sending stored text

extension DocumentStore {
    /// The current revision of a document read for sending (``GatewayStorage/documents(ids:winnerAsText:)``), with
    /// its body as stored, when a read of `revision` (nil for the current one) by `caller` would send that body as
    /// it is: the revision is the current one, no tombstone, and in the caller's channels. Nil otherwise: read the
    /// revision (``revision(id:revision:as:options:in:)``).
    ///
    /// The text is the document's properties, `_attachments` stubs included, without `_id`, `_rev` or any member a
    /// read adds: a sender passing it on (`_bulk_get`, BLIP `rev`) neither parses nor serializes it.
    func storedText(of document: StoredDocument?, revision: RevisionID?, as caller: Caller)
        -> (document: StoredDocument, node: RevisionTree.Node, text: [UInt8])?
    {
        guard let document, let text = document.winnerText, let winner = document.winner, !winner.isDeleted,
            text.revision == winner.id, revision == nil || revision == winner.id,
            caller.canSee(document.visibilityChannels(of: winner.id)),
            text.bytes.first == UInt8(ascii: "{"), text.bytes.last == UInt8(ascii: "}")
        else { return nil }
        return (document, winner, text.bytes)
    }

    /// A read's JSON text (``revision(id:revision:as:options:in:)``'s body) spliced from the stored text: the
    /// members the read adds (`_id`, `_rev`, `_revisions`, `_exp`, `_conflicts`…) written first, the stored ones
    /// after them. Nil when ``storedText(of:revision:as:)`` is, or when the read includes `_revs_info` or attachment
    /// bodies the document may have: read the revision then.
    ///
    /// ```swift
    /// let snapshots = try storage.documents(ids: ["doc"], winnerAsText: true)
    /// store.revisionText(id: "doc", as: caller, options: ReadOptions(includeRevisions: true), in: snapshots)
    /// // {"_id":"doc","_rev":"2-b","_revisions":{"ids":["b","a"],"start":2},"title":"Milk"}
    /// ```
    func revisionText(
        id: String, revision: RevisionID?, as caller: Caller, options: ReadOptions,
        in snapshots: [String: StoredDocument]
    ) -> [UInt8]? {
        guard let (document, node, text) = storedText(of: snapshots[id], revision: revision, as: caller),
            !options.includeRevisionsInfo, !(options.includeAttachments && Self.mayHaveAttachments(text))
        else { return nil }
        var members: [String: JSONValue] = ["_id": .string(document.id), "_rev": .string(node.id.description)]
        addHistory(to: &members, of: node, in: document, options: options)
        addExpiry(to: &members, of: document, options: options)
        addConflicts(to: &members, of: node, in: document, options: options)
        var bytes = JSONValue.object(members).serialized()
        guard text.count > 2 else { return bytes }  // `{}`
        bytes[bytes.count - 1] = UInt8(ascii: ",")
        bytes.append(contentsOf: text.dropFirst())
        return bytes
    }

    /// Whether a body's text may hold an `_attachments` member (a string of that name anywhere says yes).
    ///
    /// Each quote found by C's `memchr` is compared with `memcmp`: the standard library's `contains(_:)` for a
    /// subsequence is generic code that looks up type metadata on every call (18 % of a BLIP pull's CPU when it
    /// was used here).
    static func mayHaveAttachments(_ text: [UInt8]) -> Bool {
        text.withUnsafeBytes { haystack in
            attachmentsKey.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, let key = needle.baseAddress else { return false }
                let last = haystack.count - needle.count
                var start = 0
                while start <= last {
                    guard let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), last - start + 1) else {
                        return false
                    }
                    let index = base.distance(to: UnsafeRawPointer(quote))
                    if memcmp(base + index, key, needle.count) == 0 { return true }
                    start = index + 1
                }
                return false
            }
        }
    }

    private static let attachmentsKey = Array(#""_attachments""#.utf8)
}
