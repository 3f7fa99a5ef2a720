/// A document's revision tree: every known revision with its parent, deletion flag and (where kept) body.
///
/// A pure value with no I/O. It applies the rules of `replication-protocol.md` §4: local edits extend a leaf,
/// replicated revisions are inserted with their ancestry and never conflict, the winner is chosen the same way
/// on every replica, and pruning keeps every leaf. After pruning the tree may be a forest.
///
/// ```swift
/// var tree = RevisionTree()
/// let first = try tree.addLocalEdit(parent: nil, body: ["type": "task-list"], deleted: false)
/// try tree.insert(try RevisionID(parsing: "2-b"), body: ["type": "task-list", "name": "x"], deleted: false,
///                 history: [try RevisionID(parsing: "2-b"), first])
/// tree.winner?.id        // 2-b
/// ```
public struct RevisionTree: Sendable, Hashable {
    /// One revision in the tree.
    public struct Node: Sendable, Hashable {
        /// The revision's ID.
        public let id: RevisionID
        /// The parent's ID; nil for a root (a first revision, or the oldest one kept after pruning).
        public internal(set) var parent: RevisionID?
        /// Whether the revision is a deletion (tombstone).
        public internal(set) var isDeleted: Bool
        /// The revision's body, when kept. Leaves keep theirs; ancestors may lose them to compaction.
        public internal(set) var body: JSONValue?

        /// Creates a node.
        public init(id: RevisionID, parent: RevisionID?, isDeleted: Bool, body: JSONValue?) {
            self.id = id
            self.parent = parent
            self.isDeleted = isDeleted
            self.body = body
        }
    }

    /// The outcome of ``insert(_:body:deleted:history:)``.
    public enum InsertResult: Sendable, Hashable {
        /// The revision was already in the tree; nothing changed.
        case alreadyPresent
        /// The revision and `addedAncestors` missing ancestors were added.
        case inserted(addedAncestors: Int)
    }

    /// The revisions the tree lacks among those offered, and leaves it has that could be their ancestors.
    public struct RevsDiff: Sendable, Hashable {
        /// Offered revisions not in the tree, in the order offered.
        public var missing: [RevisionID]
        /// Leaves of the tree with a lower generation than some missing revision, in descending order.
        public var possibleAncestors: [RevisionID]

        /// Creates a result.
        public init(missing: [RevisionID], possibleAncestors: [RevisionID]) {
            self.missing = missing
            self.possibleAncestors = possibleAncestors
        }
    }

    private var nodesByID: [RevisionID: Node] = [:]
    private var leafIDs: Set<RevisionID> = []

    /// An empty tree (a document that does not exist yet).
    public init() {}

    /// A tree holding exactly `nodes`; parents missing from `nodes` become roots.
    public init(nodes: some Sequence<Node>) {
        for node in nodes { nodesByID[node.id] = node }
        for id in nodesByID.keys {
            if let parent = nodesByID[id]!.parent, nodesByID[parent] == nil { nodesByID[id]!.parent = nil }
        }
        recomputeLeaves()
    }

    // MARK: - Reading

    /// Whether the tree has no revisions.
    public var isEmpty: Bool { nodesByID.isEmpty }

    /// The number of revisions.
    public var count: Int { nodesByID.count }

    /// All revisions, oldest generation first.
    public var nodes: [Node] { nodesByID.values.sorted { $0.id < $1.id } }

    /// The revision with this ID.
    public subscript(id: RevisionID) -> Node? { nodesByID[id] }

    /// Whether the tree has this revision.
    public func contains(_ id: RevisionID) -> Bool { nodesByID[id] != nil }

    /// Revisions without children, winner first, then in descending winning order.
    public var leaves: [Node] {
        leafIDs.map { nodesByID[$0]! }.sorted { RevisionTree.wins($0, over: $1) }
    }

    /// The current revision: the winning leaf (§4.4), nil for an empty tree.
    public var winner: Node? {
        var best: Node?
        for id in leafIDs {
            let node = nodesByID[id]!
            if best == nil || RevisionTree.wins(node, over: best!) { best = node }
        }
        return best
    }

    /// Live leaves other than the winner: the revisions in conflict with it.
    public var conflictingLeaves: [Node] {
        Array(leaves.dropFirst().filter { !$0.isDeleted })
    }

    /// Whether two or more leaves are live.
    public var isConflicted: Bool { leafIDs.lazy.filter { !nodesByID[$0]!.isDeleted }.count >= 2 }

    /// Whether the tree has more than one leaf, live or deleted.
    public var isBranched: Bool { leafIDs.count > 1 }

    /// Whether the document is deleted: every leaf is a tombstone.
    public var isDeleted: Bool { winner?.isDeleted ?? false }

    /// Whether `id` is a leaf.
    public func isLeaf(_ id: RevisionID) -> Bool { leafIDs.contains(id) }

    /// The IDs from `id` back to its root, newest first; empty when `id` is unknown.
    public func history(of id: RevisionID) -> [RevisionID] {
        var result: [RevisionID] = []
        var current: RevisionID? = id
        while let currentID = current, let node = nodesByID[currentID] {
            result.append(currentID)
            current = node.parent
        }
        return result
    }

    /// The `_revisions` encoding of `id`'s history, nil when `id` is unknown. `_revisions` cannot tell of a gap in
    /// the generations (a history joined to an older revision, ``insert(_:body:deleted:history:)``): it ends before
    /// the first one, as Sync Gateway's does.
    public func revisionHistory(of id: RevisionID) -> RevisionHistory? {
        RevisionHistory(leadingRunOf: history(of: id))
    }

    /// Whether `ancestor` is `id` or one of its ancestors.
    public func isAncestor(_ ancestor: RevisionID, of id: RevisionID) -> Bool {
        history(of: id).contains(ancestor)
    }

    /// The deterministic winning order: a live leaf beats a tombstone; then the higher generation; then the
    /// greater digest.
    public static func wins(_ lhs: Node, over rhs: Node) -> Bool {
        if lhs.isDeleted != rhs.isDeleted { return !lhs.isDeleted }
        return rhs.id < lhs.id
    }

    // MARK: - Local edits

    /// Adds the revision a local edit creates (`new_edits=true`), following `replication-protocol.md` §4.2.
    ///
    /// With no `parent`, the edit creates the document, or continues it when its winner is a tombstone.
    /// With a `parent`, that revision must be a leaf; the edit may open a conflict branch.
    /// With `allowConflict`, the parent may be any revision in the tree (a new branch off an ancestor, as
    /// Couchbase Lite 1.x's `saveAllowingConflict` does), and no parent on an existing document starts a
    /// new root.
    ///
    /// - Returns: The new revision's ID, from ``RevisionID/next(after:body:deleted:)``.
    /// - Throws: ``CoreError`` `.conflict` (409) when the parent is not a leaf, is unknown, is given for a
    ///   document that does not exist, or is missing while the document exists.
    @discardableResult
    public mutating func addLocalEdit(
        parent: RevisionID?, body: JSONValue, deleted: Bool, allowConflict: Bool = false,
        serializedBody: [UInt8]? = nil
    ) throws(CoreError) -> RevisionID {
        let effectiveParent: RevisionID?
        if let parent {
            guard !isEmpty else { throw CoreError(.conflict, "Document revision conflict: no such document") }
            guard leafIDs.contains(parent) || (allowConflict && nodesByID[parent] != nil) else {
                throw CoreError(.conflict, "Document revision conflict")
            }
            effectiveParent = parent
        } else if allowConflict {
            effectiveParent = winner.flatMap { $0.isDeleted ? $0.id : nil }
        } else if let winner {
            guard winner.isDeleted else { throw CoreError(.conflict, "Document exists") }
            effectiveParent = winner.id
        } else {
            effectiveParent = nil
        }
        let id = try RevisionID.next(
            after: effectiveParent, body: body, deleted: deleted, serializedBody: serializedBody)
        guard nodesByID[id] == nil else { throw CoreError(.conflict, "Document revision conflict") }
        addNode(Node(id: id, parent: effectiveParent, isDeleted: deleted, body: body))
        return id
    }

    // MARK: - Inserting existing revisions

    /// Inserts a revision that was made elsewhere, with its ancestry (`new_edits=false`, §4.3).
    ///
    /// Missing ancestors are added without bodies; the revision gets `body` and `deleted`. When the history
    /// does not reach a known revision, its oldest entry becomes a new root. Never a conflict error: a
    /// concurrent edit becomes a new branch. Inserting a revision that is already present changes nothing,
    /// except that a revision known only as a body-less ancestor takes the body and deletion flag given.
    ///
    /// The one gap allowed is where the history joins this tree: a client that made more edits than the history it
    /// sends may hold (LiteCore keeps 20) sends the newest ones, then the revision it knows the receiver has
    /// (`25,…,8,1-a`); the oldest new revision becomes that revision's child, as Sync Gateway links it.
    ///
    /// - Parameters:
    ///   - history: The revision's ancestry newest first, starting with `id` itself (the expanded
    ///     `_revisions`); just `[id]` when unknown.
    /// - Throws: ``CoreError`` `.invalidRevisionHistory` when `history` does not start with `id` or has a gap
    ///   anywhere but where it reaches a revision of this tree.
    @discardableResult
    public mutating func insert(_ id: RevisionID, body: JSONValue?, deleted: Bool, history: [RevisionID])
        throws(CoreError) -> InsertResult
    {
        let history = history.isEmpty ? [id] : history
        guard history[0] == id else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: history starts with \(history[0]), not \(id)")
        }
        let knownIndex = history.firstIndex { nodesByID[$0] != nil } ?? history.count
        try RevisionHistory.checkConsecutive(history[..<knownIndex])
        try RevisionHistory.checkConsecutive(history[knownIndex...])
        if knownIndex > 0, knownIndex < history.count,
            history[knownIndex].generation >= history[knownIndex - 1].generation
        {
            throw CoreError(
                .invalidRevisionHistory,
                "Bad _revisions: \(history[knownIndex]) cannot be the parent of \(history[knownIndex - 1])")
        }
        guard knownIndex > 0 else {
            // Known only as a body-less ancestor until now: keep what this copy brings.
            if nodesByID[id]!.body == nil, let body {
                nodesByID[id]!.body = body
                nodesByID[id]!.isDeleted = deleted
            }
            return .alreadyPresent
        }
        for index in stride(from: knownIndex - 1, through: 0, by: -1) {
            let parent = index + 1 < history.count ? history[index + 1] : nil
            let isNewest = index == 0
            addNode(
                Node(id: history[index], parent: parent, isDeleted: isNewest && deleted, body: isNewest ? body : nil))
        }
        return .inserted(addedAncestors: knownIndex - 1)
    }

    /// Inserts a revision with its `_revisions` history.
    @discardableResult
    public mutating func insert(body: JSONValue?, deleted: Bool, history: RevisionHistory) throws(CoreError)
        -> InsertResult
    {
        try insert(history.newest, body: body, deleted: deleted, history: history.revisionIDs)
    }

    private mutating func addNode(_ node: Node) {
        nodesByID[node.id] = node
        if let parent = node.parent { leafIDs.remove(parent) }
        leafIDs.insert(node.id)
    }

    // MARK: - Revs-diff

    /// Which of the `offered` revisions the tree lacks, and which of its leaves might be their ancestors
    /// (the `_revs_diff` answer for one document).
    public func revsDiff(_ offered: [RevisionID]) -> RevsDiff {
        var seen: Set<RevisionID> = []
        let missing = offered.filter { nodesByID[$0] == nil && seen.insert($0).inserted }
        guard let highest = missing.map(\.generation).max() else {
            return RevsDiff(missing: [], possibleAncestors: [])
        }
        let ancestors = leafIDs.filter { $0.generation < highest }.sorted(by: >)
        return RevsDiff(missing: missing, possibleAncestors: ancestors)
    }

    // MARK: - Merging

    /// Adds every revision of `other`. Merging is commutative: `a.merging(b) == b.merging(a)`.
    ///
    /// Where both trees know a revision, the result keeps a known parent, a body if either has one, and the
    /// deletion flag if either sets it.
    public mutating func merge(_ other: RevisionTree) {
        for (id, theirs) in other.nodesByID {
            guard var mine = nodesByID[id] else {
                nodesByID[id] = theirs
                continue
            }
            if mine.parent == nil || (theirs.parent != nil && theirs.parent! > mine.parent!) {
                mine.parent = theirs.parent ?? mine.parent
            }
            mine.isDeleted = mine.isDeleted || theirs.isDeleted
            if let theirBody = theirs.body {
                if let myBody = mine.body {
                    // Identical revisions carry identical bodies; pick deterministically if they do not.
                    if theirBody.canonicalBytes.lexicographicallyPrecedes(myBody.canonicalBytes) {
                        mine.body = theirBody
                    }
                } else {
                    mine.body = theirBody
                }
            }
            nodesByID[id] = mine
        }
        recomputeLeaves()
    }

    /// This tree with every revision of `other` added.
    public func merging(_ other: RevisionTree) -> RevisionTree {
        var result = self
        result.merge(other)
        return result
    }

    // MARK: - Pruning and compaction

    /// Stems every branch to its newest `limit` revisions (the `revs_limit`, §4.6).
    ///
    /// Leaves are never removed, so no conflict branch and no tombstone is lost; each leaf keeps
    /// `min(limit, depth)` revisions of its history, and the oldest kept ones become roots.
    ///
    /// - Parameter limit: Revisions to keep per branch; values below 1 are treated as 1.
    /// - Returns: The IDs removed.
    @discardableResult
    public mutating func prune(toDepth limit: Int) -> [RevisionID] {
        let limit = max(limit, 1)
        guard nodesByID.count > limit else { return [] }  // no branch can be longer than the tree
        var kept: Set<RevisionID> = []
        for leaf in leafIDs {
            var current: RevisionID? = leaf
            var depth = 0
            while let id = current, depth < limit {
                kept.insert(id)
                current = nodesByID[id]?.parent
                depth += 1
            }
        }
        let removed = nodesByID.keys.filter { !kept.contains($0) }
        guard !removed.isEmpty else { return [] }
        for id in removed { nodesByID[id] = nil }
        for id in kept {
            if let parent = nodesByID[id]!.parent, nodesByID[parent] == nil { nodesByID[id]!.parent = nil }
        }
        return removed.sorted()
    }

    /// Removes leaf revisions and the ancestors that no remaining leaf needs (CouchDB's `_purge`).
    ///
    /// - Parameter revisions: Leaves to remove; IDs that are not leaves of the tree are ignored.
    /// - Returns: The leaves actually removed, in the order given.
    @discardableResult
    public mutating func purge(_ revisions: [RevisionID]) -> [RevisionID] {
        var purged: [RevisionID] = []
        for id in revisions where leafIDs.contains(id) && !purged.contains(id) { purged.append(id) }
        guard !purged.isEmpty else { return [] }
        for id in purged { leafIDs.remove(id) }
        var needed: Set<RevisionID> = []
        for leaf in leafIDs { needed.formUnion(history(of: leaf)) }
        for id in Array(nodesByID.keys) where !needed.contains(id) { nodesByID[id] = nil }
        return purged
    }

    /// Drops the bodies of revisions that are not leaves (they are needed only for `oldDoc`, attachment stubs
    /// and `GET ?rev=` of old revisions).
    ///
    /// - Parameter keeping: Revisions whose bodies stay, such as the winner's parent.
    public mutating func removeAncestorBodies(keeping: Set<RevisionID> = []) {
        for id in nodesByID.keys where !leafIDs.contains(id) && !keeping.contains(id) {
            nodesByID[id]!.body = nil
        }
    }

    /// Sets the body of a revision already in the tree (e.g. after resolving attachment stubs).
    public mutating func setBody(_ body: JSONValue?, of id: RevisionID) {
        nodesByID[id]?.body = body
    }

    private mutating func recomputeLeaves() {
        var parents: Set<RevisionID> = []
        for node in nodesByID.values {
            if let parent = node.parent { parents.insert(parent) }
        }
        leafIDs = Set(nodesByID.keys.filter { !parents.contains($0) })
    }
}

// MARK: - Codable

extension RevisionTree: Codable {
    private struct EncodedNode: Codable {
        var rev: RevisionID
        var parent: RevisionID?
        var deleted: Bool?
        var body: JSONValue?
    }

    public init(from decoder: any Decoder) throws {
        let encoded = try decoder.singleValueContainer().decode([EncodedNode].self)
        self.init(nodes: encoded.map { Node(id: $0.rev, parent: $0.parent, isDeleted: $0.deleted ?? false, body: $0.body) })
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(
            nodes.map { EncodedNode(rev: $0.id, parent: $0.parent, deleted: $0.isDeleted ? true : nil, body: $0.body) })
    }
}
