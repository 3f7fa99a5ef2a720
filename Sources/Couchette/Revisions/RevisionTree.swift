import CouchetteCore

/// A document's revision tree as a value. The winner follows CouchDB: a live leaf beats a deleted one, then
/// the higher generation, then the higher ID.
///
/// ```swift
/// let tree = try lists.revisionTree(documentID: id)
/// print(tree?.winningRevisionID ?? "", tree?.leaves.count ?? 0)
/// ```
public struct RevisionTree: Sendable {
    /// One revision of the tree.
    public struct Node: Sendable, Hashable {
        /// The revision's ID.
        public let revisionID: String
        /// Its parent's ID; nil for a root.
        public let parentRevisionID: String?
        /// Whether it is a deletion.
        public let isDeletion: Bool
        /// Whether it has no children.
        public let isLeaf: Bool
        /// Whether its body is still stored.
        public let hasBody: Bool
    }

    /// The document's ID.
    public let documentID: String
    /// Every revision, oldest generation first.
    public let nodes: [Node]
    /// The winning revision's ID.
    public let winningRevisionID: String

    init(documentID: String, tree: CouchetteCore.RevisionTree) {
        self.documentID = documentID
        nodes = tree.nodes.map { node in
            Node(
                revisionID: node.id.description, parentRevisionID: node.parent?.description, isDeletion: node.isDeleted,
                isLeaf: tree.isLeaf(node.id), hasBody: node.body != nil)
        }
        winningRevisionID = tree.winner?.id.description ?? ""
    }

    /// The revisions without children, winner first.
    public var leaves: [Node] {
        let leaves = nodes.filter(\.isLeaf)
        let winner = leaves.filter { $0.revisionID == winningRevisionID }
        return winner + leaves.filter { $0.revisionID != winningRevisionID }.reversed()
    }
}
