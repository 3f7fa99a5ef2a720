import CouchetteCore
import Foundation

/// Encodes a ``StoredDocument``'s metadata as JSON, in the spirit of Sync Gateway's `_sync`:
/// `{"history": [[rev, parentIndex, deleted, body|null, [channels]|null], …], "access": {user: [ch…]},
/// "role_access": {user: [role…]}, "exp": seconds}`. The winner's body is stored apart.
enum StoredDocumentCodec {
    static func encodeMetadata(_ document: StoredDocument) -> [UInt8] {
        let nodes = document.tree.nodes
        var index: [RevisionID: Int] = [:]
        for (offset, node) in nodes.enumerated() { index[node.id] = offset }
        let winnerID = document.tree.winner?.id
        let history: [JSONValue] = nodes.map { node in
            let channels: JSONValue =
                document.channels[node.id].map { .array($0.sorted().map(JSONValue.string)) } ?? .null
            return .array([
                .string(node.id.description), .int(Int64(node.parent.flatMap { index[$0] } ?? -1)),
                .bool(node.isDeleted), node.id == winnerID ? .null : (node.body ?? .null), channels,
            ])
        }
        var metadata: [String: JSONValue] = ["history": .array(history)]
        if !document.access.isEmpty { metadata["access"] = grants(document.access) }
        if !document.roleAccess.isEmpty { metadata["role_access"] = grants(document.roleAccess) }
        if let expiry = document.expiry { metadata["exp"] = .double(expiry.timeIntervalSince1970) }
        return JSONValue.object(metadata).serialized()
    }

    private static func grants(_ grants: [String: Set<String>]) -> JSONValue {
        .object(grants.mapValues { .array($0.sorted().map(JSONValue.string)) })
    }

    static func decode(
        id: String, sequence: UInt64, winnerBody: [UInt8], metadata: [UInt8]
    ) throws(GatewayError) -> StoredDocument {
        do {
            let json = try JSONValue(parsing: metadata)
            guard case .array(let history)? = json["history"] else { throw corrupt(id) }
            var document = StoredDocument(id: id)
            document.sequence = sequence
            var ids: [RevisionID] = []
            var nodes: [RevisionTree.Node] = []
            for entry in history {
                guard case .array(let fields) = entry, fields.count == 5, case .string(let rev) = fields[0],
                    case .int(let parent) = fields[1], case .bool(let deleted) = fields[2]
                else { throw corrupt(id) }
                let revision = try RevisionID(parsing: rev)
                ids.append(revision)
                let parentID = parent >= 0 && Int(parent) < ids.count - 1 ? ids[Int(parent)] : nil
                nodes.append(.init(id: revision, parent: parentID, isDeleted: deleted, body: fields[3].isNull ? nil : fields[3]))
                if case .array(let channels) = fields[4] {
                    document.channels[revision] = Set(channels.compactMap(\.stringValue))
                }
            }
            document.tree = RevisionTree(nodes: nodes)
            if let winner = document.tree.winner {
                document.tree.setBody(try JSONValue(parsing: winnerBody), of: winner.id)
            }
            document.access = readGrants(json["access"])
            document.roleAccess = readGrants(json["role_access"])
            if let seconds = json["exp"]?.doubleValue { document.expiry = Date(timeIntervalSince1970: seconds) }
            return document
        } catch let error as GatewayError {
            throw error
        } catch {
            throw corrupt(id)
        }
    }

    private static func readGrants(_ json: JSONValue?) -> [String: Set<String>] {
        (json?.objectValue ?? [:]).mapValues { Set(($0.arrayValue ?? []).compactMap(\.stringValue)) }
    }

    private static func corrupt(_ id: String) -> GatewayError {
        .internalError("The stored metadata of document \"\(id)\" is corrupt")
    }
}
