import CouchetteCore

// MARK: - Reading as a caller

extension DocumentStore {
    /// A revision's body as `caller` may see it (spec: gateway-rest-api.md §5.1, sync-function.md §7).
    ///
    /// - Parameters:
    ///   - id: The document ID.
    ///   - revision: The revision; the current one when nil.
    ///   - caller: Who reads. Without `revision`, a caller lacking the revision's channels gets 403; with it,
    ///     a redacted stub `{"_id","_rev","_removed":true}` (so replicators learn of removals).
    ///   - options: Extra members to include.
    /// - Returns: The body with `_id`, `_rev`, and `_deleted`/`_revisions`/`_revs_info` as asked.
    /// - Throws: 404 `missing` or `deleted`, 403 `forbidden`, 400 for malformed revision IDs.
    public func read(
        id: String, revision: RevisionID? = nil, as caller: Caller, options: ReadOptions = ReadOptions()
    ) throws(GatewayError) -> JSONValue {
        guard let document = try storage.document(id: id), let winner = document.winner else {
            throw .notFound("missing")
        }
        let node: RevisionTree.Node
        if let revision {
            guard let found = document.tree[revision] else { throw .notFound("missing") }
            node = found
        } else {
            guard !winner.isDeleted else { throw .notFound("deleted") }
            node = winner
        }
        guard caller.canSee(document.channels[node.id] ?? []) else {
            if revision == nil { throw .forbidden("forbidden") }
            return redactedBody(of: node, in: document, options: options)
        }
        return try body(of: node, in: document, options: options)
    }

    /// A revision's full body with the members `options` ask for.
    func body(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions) throws(GatewayError)
        -> JSONValue
    {
        guard case .object(var members) = try body(of: node, in: document, includeRevisions: false) else {
            throw .notFound("missing")
        }
        addHistory(to: &members, of: node, in: document, options: options)
        return .object(members)
    }

    /// The stub a caller gets for a revision outside their channels.
    func redactedBody(of node: RevisionTree.Node, in document: StoredDocument, options: ReadOptions) -> JSONValue {
        var members: [String: JSONValue] = ["_id": .string(document.id), "_rev": .string(node.id.description)]
        if node.isDeleted { members["_deleted"] = true } else { members["_removed"] = true }
        addHistory(to: &members, of: node, in: document, options: options)
        return .object(members)
    }

    private func addHistory(
        to members: inout [String: JSONValue], of node: RevisionTree.Node, in document: StoredDocument,
        options: ReadOptions
    ) {
        let history = document.tree.history(of: node.id)
        if options.includeRevisions {
            var kept = history
            if let limit = options.revisionsLimit { kept = Array(kept.prefix(max(limit, 1))) }
            if let stopAt = options.revisionsFrom, let index = kept.firstIndex(where: { stopAt.contains($0) }) {
                kept = Array(kept.prefix(through: index))
            }
            if let revisions = try? RevisionHistory(revisionIDs: kept) { members["_revisions"] = revisions.json }
        }
        if options.includeRevisionsInfo {
            members["_revs_info"] = .array(
                history.map { revision in
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

    /// `open_revs` for a caller: the given revisions (all leaves, tombstones included, when nil), each as
    /// `{"ok": body}` (redacted outside the caller's channels) or `{"missing": rev}`.
    public func openRevisions(
        id: String, revisions: [RevisionID]?, as caller: Caller, options: ReadOptions = ReadOptions()
    ) throws(GatewayError) -> [JSONValue] {
        guard let document = try storage.document(id: id) else {
            return (revisions ?? []).map { ["missing": .string($0.description)] }
        }
        let wanted = revisions ?? document.tree.leaves.map(\.id)
        return wanted.map { revision in
            guard let node = document.tree[revision],
                let body = caller.canSee(document.channels[revision] ?? [])
                    ? try? body(of: node, in: document, options: options)
                    : redactedBody(of: node, in: document, options: options)
            else { return ["missing": .string(revision.description)] }
            return ["ok": body]
        }
    }
}

// MARK: - ReadOptions

/// What a document read includes besides the body.
public struct ReadOptions: Sendable, Hashable {
    /// Add `_revisions` (`revs=true`).
    public var includeRevisions: Bool
    /// Cap `_revisions` at this many IDs (`revs_limit`).
    public var revisionsLimit: Int?
    /// Stop `_revisions` at the first of these (`revs_from`, or `atts_since` for the history).
    public var revisionsFrom: Set<RevisionID>?
    /// Add `_revs_info` (`revs_info=true`).
    public var includeRevisionsInfo: Bool

    /// Creates options; by default the body only.
    public init(
        includeRevisions: Bool = false, revisionsLimit: Int? = nil, revisionsFrom: Set<RevisionID>? = nil,
        includeRevisionsInfo: Bool = false
    ) {
        self.includeRevisions = includeRevisions
        self.revisionsLimit = revisionsLimit
        self.revisionsFrom = revisionsFrom
        self.includeRevisionsInfo = includeRevisionsInfo
    }
}
