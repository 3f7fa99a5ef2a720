import CouchetteCore
import Foundation

// MARK: - Reading as a caller

extension DocumentStore {
    /// A revision's body as `caller` may see it (spec: gateway-rest-api.md §5.1, sync-function.md §7), with
    /// included attachment bodies inline as base64 `data`.
    ///
    /// - Parameters:
    ///   - id: The document ID.
    ///   - revision: The revision; the current one when nil.
    ///   - caller: Who reads. Without `revision`, a caller lacking the revision's channels gets 403; with it,
    ///     a redacted stub `{"_id","_rev","_removed":true}` (so replicators learn of removals).
    ///   - options: Extra members to include.
    /// - Returns: The body with `_id`, `_rev`, and `_deleted`/`_revisions`/`_revs_info`/`_exp` as asked.
    /// - Throws: 404 `missing` or `deleted`, 403 `forbidden`, 400 for malformed revision IDs.
    public func read(
        id: String, revision: RevisionID? = nil, as caller: Caller, options: ReadOptions = ReadOptions()
    ) throws(GatewayError) -> JSONValue {
        try self.revision(id: id, revision: revision, as: caller, options: options).json
    }

    /// A revision as `caller` may see it, with the attachment bodies `options` ask for kept apart from the JSON
    /// (for multipart responses). Same rules and errors as ``read(id:revision:as:options:)``.
    ///
    /// ```swift
    /// let revision = try store.revision(id: "doc", as: caller, options: ReadOptions(includeAttachments: true))
    /// revision.attachmentBodies.keys   // the attachments whose bytes were included
    /// ```
    ///
    /// - Parameter snapshots: Documents already read (``GatewayStorage/documents(ids:)``), for requests reading
    ///   many at once; a document absent from them is missing.
    public func revision(
        id: String, revision: RevisionID? = nil, as caller: Caller, options: ReadOptions = ReadOptions(),
        in snapshots: [String: StoredDocument]? = nil
    ) throws(GatewayError) -> DocumentRevision {
        let (document, node) = try storedRevision(id: id, revision: revision, in: snapshots)
        guard caller.canSee(document.visibilityChannels(of: node.id)) else {
            if revision == nil { throw .forbidden("forbidden") }
            return DocumentRevision(body: redactedBody(of: node, in: document, options: options))
        }
        return try loadedRevision(of: node, in: document, options: options)
    }

    /// `open_revs` for a caller: the given revisions (all leaves, tombstones included, when nil), each as
    /// `{"ok": body}` (redacted outside the caller's channels) or `{"missing": rev}`.
    public func openRevisions(
        id: String, revisions: [RevisionID]?, as caller: Caller, options: ReadOptions = ReadOptions()
    ) throws(GatewayError) -> [JSONValue] {
        try openRevisionResults(id: id, revisions: revisions, as: caller, options: options).map(\.json)
    }

    /// `open_revs` for a caller, with attachment bodies kept apart (for `multipart/mixed` responses): the given
    /// revisions (all leaves, tombstones included, when nil), each found (redacted outside the caller's
    /// channels) or missing.
    ///
    /// With `latest`, each given revision that is no longer a leaf is replaced by the winning leaf descending
    /// from it (CouchDB's `latest=true`, used by replicators that fetch a revision that changed meanwhile).
    public func openRevisionResults(
        id: String, revisions: [RevisionID]?, as caller: Caller, options: ReadOptions = ReadOptions(),
        latest: Bool = false
    ) throws(GatewayError) -> [OpenRevision] {
        guard let document = try storage.document(id: id) else {
            return (revisions ?? []).map { .missing($0) }
        }
        var wanted = revisions ?? document.tree.leaves.map(\.id)
        if latest, revisions != nil {
            var seen = Set<RevisionID>()
            wanted = wanted.map { Self.latestLeaf(descendingFrom: $0, in: document.tree) }.filter { seen.insert($0).inserted }
        }
        return wanted.map { revision in
            guard let node = document.tree[revision] else { return .missing(revision) }
            guard caller.canSee(document.visibilityChannels(of: revision)) else {
                return .found(DocumentRevision(body: redactedBody(of: node, in: document, options: options)))
            }
            guard let loaded = try? loadedRevision(of: node, in: document, options: options) else {
                return .missing(revision)
            }
            return .found(loaded)
        }
    }

    /// A stored document and one of its revisions: the given one, or the current one when nil.
    ///
    /// - Throws: 404 `missing` for an unknown document or revision, 404 `deleted` for a deleted document read
    ///   without a revision.
    func storedRevision(id: String, revision: RevisionID?, in snapshots: [String: StoredDocument]? = nil)
        throws(GatewayError) -> (StoredDocument, RevisionTree.Node)
    {
        let stored: StoredDocument?
        if let snapshots {
            stored = try snapshots[id]?.parsingWinnerText()
        } else {
            stored = try storage.document(id: id)
        }
        guard let document = stored, let winner = document.winner else {
            throw .notFound("missing")
        }
        guard let revision else {
            guard !winner.isDeleted else { throw .notFound("deleted") }
            return (document, winner)
        }
        guard let node = document.tree[revision] else { throw .notFound("missing") }
        return (document, node)
    }

    /// The winning leaf among `revision` and its descendants; `revision` itself when unknown or a leaf.
    static func latestLeaf(descendingFrom revision: RevisionID, in tree: RevisionTree) -> RevisionID {
        guard tree.contains(revision), !tree.isLeaf(revision) else { return revision }
        let descendants = tree.leaves.filter { tree.isAncestor(revision, of: $0.id) }
        let best = descendants.dropFirst().reduce(descendants.first) { best, leaf in
            guard let best else { return leaf }
            return RevisionTree.wins(leaf, over: best) ? leaf : best
        }
        return best?.id ?? revision
    }

    // MARK: - Bodies

    /// A revision's full body with the members and attachment bodies `options` ask for.
    func loadedRevision(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions)
        throws(GatewayError) -> DocumentRevision
    {
        guard case .object(var members) = try body(of: node, in: document, options: options) else {
            throw .notFound("missing")
        }
        guard options.includeAttachments else { return DocumentRevision(body: .object(members)) }
        let bodies = try includeAttachments(
            in: &members, of: node, in: document, since: options.attachmentsSince ?? [])
        return DocumentRevision(body: .object(members), attachmentBodies: bodies)
    }

    /// A revision's full body with the members `options` ask for (attachments as stubs).
    func body(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions) throws(GatewayError)
        -> JSONValue
    {
        var members = try storedMembers(of: node, in: document)
        addHistory(to: &members, of: node, in: document, options: options)
        addExpiry(to: &members, of: document, options: options)
        addConflicts(to: &members, of: node, in: document, options: options)
        return .object(members)
    }

    /// The stub a caller gets for a revision outside their channels.
    func redactedBody(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions) -> JSONValue {
        var members: [String: JSONValue] = ["_id": .string(document.id), "_rev": .string(node.id.description)]
        if node.isDeleted { members["_deleted"] = true } else { members["_removed"] = true }
        addHistory(to: &members, of: node, in: document, options: options)
        return .object(members)
    }

    /// Loads the bytes of the attachments a reader lacks and turns their stubs into plain metadata.
    ///
    /// An attachment stays a stub when its `revpos` is at most the generation of the newest revision of
    /// `since` in the revision's history (the reader has that revision, so it has the attachment):
    /// replication-protocol.md §7.3, Sync Gateway's `findAncestorFromSet`.
    ///
    /// - Returns: The loaded bytes by name.
    /// - Throws: 500 when stored metadata names bytes the storage lacks.
    private func includeAttachments(
        in members: inout [String: JSONValue], of node: RevisionTree.Node, in document: StoredDocument,
        since: Set<RevisionID>
    ) throws(GatewayError) -> [String: [UInt8]] {
        guard case .object(var entries)? = members["_attachments"] else { return [:] }
        var minimumRevpos = 1
        if !since.isEmpty, let known = document.tree.history(of: node.id).first(where: { since.contains($0) }) {
            minimumRevpos = known.generation + 1
        }
        var bodies: [String: [UInt8]] = [:]
        for (name, entry) in entries {
            guard case .object(var fields) = entry else { continue }
            let revpos = fields["revpos"]?.intValue.map { Int($0) } ?? node.id.generation
            guard revpos >= minimumRevpos else { continue }
            guard let digest = fields["digest"]?.stringValue, let data = try storage.attachment(digest: digest) else {
                throw .internalError("Attachment \"\(name)\" is missing from storage")
            }
            fields["stub"] = nil
            entries[name] = .object(fields)
            bodies[name] = data
        }
        members["_attachments"] = .object(entries)
        return bodies
    }

    /// The part of a revision's history a read sends (`_revisions`): the revision first, at most
    /// `options.revisionsLimit` of them, ending at the first of `options.revisionsFrom` the reader has.
    func sentHistory(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions) -> [RevisionID] {
        var kept = document.tree.history(of: node.id)
        if let limit = options.revisionsLimit { kept = Array(kept.prefix(max(limit, 1))) }
        if let stopAt = options.revisionsFrom, let index = kept.firstIndex(where: { stopAt.contains($0) }) {
            kept = Array(kept.prefix(through: index))
        }
        return kept
    }

    func addHistory(
        to members: inout [String: JSONValue], of node: RevisionTree.Node, in document: StoredDocument,
        options: ReadOptions
    ) {
        if options.includeRevisions,
            let revisions = RevisionHistory(leadingRunOf: sentHistory(of: node, in: document, options: options))
        {
            members["_revisions"] = revisions.json
        }
        if options.includeRevisionsInfo {
            members["_revs_info"] = .array(
                document.tree.history(of: node.id).map { revision in
                    let status: String
                    switch document.tree[revision] {
                    case let node? where node.isDeleted: status = "deleted"
                    case let node? where node.body != nil: status = "available"
                    default: status = "missing"
                    }
                    return ["rev": .string(revision.description), "status": .string(status)]
                })
        }
    }

    /// CouchDB's `_conflicts` and `_deleted_conflicts` (losing leaves, in winning order; only on the winner, and
    /// only when there are some) and `_local_seq`.
    func addConflicts(
        to members: inout [String: JSONValue], of node: RevisionTree.Node, in document: StoredDocument,
        options: ReadOptions
    ) {
        if options.includeLocalSequence { members["_local_seq"] = .int(Int64(document.sequence)) }
        guard node.id == document.tree.winner?.id else { return }
        let losers = document.tree.leaves.dropFirst()
        if options.includeConflicts {
            let live = losers.filter { !$0.isDeleted }.map { JSONValue.string($0.id.description) }
            if !live.isEmpty { members["_conflicts"] = .array(live) }
        }
        if options.includeDeletedConflicts {
            let deleted = losers.filter(\.isDeleted).map { JSONValue.string($0.id.description) }
            if !deleted.isEmpty { members["_deleted_conflicts"] = .array(deleted) }
        }
    }

    /// `_exp` as RFC 3339 (`show_exp=true`), when the document expires.
    func addExpiry(to members: inout [String: JSONValue], of document: StoredDocument, options: ReadOptions) {
        guard options.includeExpiry, let expiry = document.expiry else { return }
        members["_exp"] = .string(expiry.formatted(Date.ISO8601FormatStyle()))
    }
}
