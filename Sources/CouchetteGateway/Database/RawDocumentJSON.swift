import CouchetteCore
import Foundation

// MARK: - RawDocumentJSON

/// The stored form of a document as `GET /{db}/_raw/{doc}` shows it (spec: gateway-rest-api.md §16): the
/// current revision's body plus Sync Gateway's `_sync` metadata.
///
/// ```json
/// {"title":"Groceries","_sync":{"rev":"2-b","sequence":7,"flags":16,
///   "history":{"revs":["1-a","2-b","2-c"],"parents":[-1,0,0],"channels":[["lists"],["lists"],null],
///              "bodymap":{"2":"{\"title\":\"Other\"}"}},
///   "channels":{"lists":null,"old":{"seq":5,"removed":true}},"access":{"user1":{"lists":7}},"exp":1700000000}}
/// ```
///
/// Differences from Sync Gateway: a channel left at an older sequence than the current revision's names no `rev`, and there is no
/// `time_saved`, `recent_sequences` or `new_rev`.
enum RawDocumentJSON {
    // MARK: - Flags

    /// The winner is a tombstone.
    static let deletedFlag = 1
    /// A revision newer than the winner (a higher generation on another branch) exists.
    static let newerThanWinnerFlag = 4
    /// Two or more leaves are live.
    static let conflictFlag = 8
    /// The tree has more than one leaf.
    static let branchedFlag = 16

    // MARK: - Building

    /// The raw JSON of a stored document.
    static func make(_ document: StoredDocument) -> JSONValue {
        var body = document.winner?.body?.objectValue ?? [:]
        body["_sync"] = sync(document)
        return .object(body)
    }

    /// The `_sync` object.
    private static func sync(_ document: StoredDocument) -> JSONValue {
        let tree = document.tree
        let nodes = tree.nodes
        var object: [String: JSONValue] = [
            "sequence": .int(Int64(document.sequence)),
            "history": history(document, nodes: nodes),
            "channels": channels(document),
        ]
        if let winner = tree.winner { object["rev"] = .string(winner.id.description) }
        let flags = flags(tree)
        if flags != 0 { object["flags"] = .int(Int64(flags)) }
        if !document.access.isEmpty { object["access"] = StoredDocumentCodec.grantsJSON(document.access, .channel, of: document) }
        if !document.roleAccess.isEmpty { object["role_access"] = StoredDocumentCodec.grantsJSON(document.roleAccess, .role, of: document) }
        if let expiry = document.expiry { object["exp"] = .int(Int64(expiry.timeIntervalSince1970.rounded())) }
        return .object(object)
    }

    /// `history`: revisions in tree order with parent indexes, deleted indexes, channels and the bodies kept for
    /// revisions other than the winner.
    private static func history(_ document: StoredDocument, nodes: [RevisionTree.Node]) -> JSONValue {
        var index: [RevisionID: Int] = [:]
        for (offset, node) in nodes.enumerated() { index[node.id] = offset }
        let winner = document.tree.winner?.id
        var deleted: [JSONValue] = []
        var bodies: [String: JSONValue] = [:]
        for (offset, node) in nodes.enumerated() {
            if node.isDeleted { deleted.append(.int(Int64(offset))) }
            if node.id != winner, let body = node.body { bodies[String(offset)] = .string(body.serializedString()) }
        }
        var history: [String: JSONValue] = [
            "revs": .array(nodes.map { .string($0.id.description) }),
            "parents": .array(nodes.map { .int(Int64($0.parent.flatMap { index[$0] } ?? -1)) }),
            "channels": .array(
                nodes.map { node in
                    document.channels[node.id].map { .sortedStrings($0) } ?? .null
                }),
        ]
        if !deleted.isEmpty { history["deleted"] = .array(deleted) }
        if !bodies.isEmpty { history["bodymap"] = .object(bodies) }
        return .object(history)
    }

    /// `channels`: `null` for the channels the document is in, `{"seq", "rev"?, "del"?}` for those it left.
    private static func channels(_ document: StoredDocument) -> JSONValue {
        var channels: [String: JSONValue] = [:]
        for channel in document.currentChannels { channels[channel] = .null }
        for (channel, sequence) in document.channelRemovals where channels[channel] == nil {
            var left: [String: JSONValue] = ["seq": .int(Int64(sequence))]
            if sequence == document.sequence, let winner = document.tree.winner {
                left["rev"] = .string(winner.id.description)
                if winner.isDeleted { left["del"] = true }
            }
            channels[channel] = .object(left)
        }
        return .object(channels)
    }

    /// The document flag bits of the tree.
    static func flags(_ tree: RevisionTree) -> Int {
        guard let winner = tree.winner else { return 0 }
        var flags = 0
        if winner.isDeleted { flags |= deletedFlag }
        if tree.leaves.contains(where: { $0.id.generation > winner.id.generation }) { flags |= newerThanWinnerFlag }
        if tree.isConflicted { flags |= conflictFlag }
        if tree.isBranched { flags |= branchedFlag }
        return flags
    }
}
