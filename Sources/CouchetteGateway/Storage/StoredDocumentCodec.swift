import CouchetteCore
import Foundation

/// Encodes a ``StoredDocument``'s metadata as JSON, in the spirit of Sync Gateway's `_sync`:
/// `{"history": [[rev, parentIndex, deleted, body|null, [channels]|null], …], "access": {user: {ch: seq}},
/// "role_access": {user: {role: seq}}, "removed": {ch: seq}, "exp": seconds}`, grants with the sequence that first
/// made them and channels left with the sequence of leaving; a sequence equal to the document's own is written
/// `null` (so a write's metadata can be encoded before its sequence is known, see ``EncodedWrite``). The winner's
/// body is stored apart. Grants written as arrays (before grant sequences were kept) read with the document's
/// sequence.
enum StoredDocumentCodec {
    /// The metadata's JSON text, written straight from the document (it is encoded on every write).
    static func encodeMetadata(_ document: StoredDocument) -> [UInt8] {
        // Its winner's body is elsewhere: written, it would be lost.
        precondition(document.winnerText == nil, "A document read for sending cannot be written")
        let nodes = document.tree.nodes
        var index: [RevisionID: Int] = [:]
        if nodes.count > 1 {
            for (offset, node) in nodes.enumerated() { index[node.id] = offset }
        }
        let winnerID = document.tree.winner?.id
        var writer = JSONWriter(reservingCapacity: 160 + 48 * nodes.count)
        writer.beginObject()
        writer.key("history")
        writer.beginArray()
        for node in nodes {
            writer.beginArray()
            writer.string(node.id.description)
            writer.int(Int64(node.parent.flatMap { index[$0] } ?? -1))
            writer.bool(node.isDeleted)
            if node.id != winnerID, let body = node.body { writer.value(body) } else { writer.null() }
            if let channels = document.channels[node.id] {
                writer.beginArray()
                for channel in channels.sorted() { writer.string(channel) }
                writer.endArray()
            } else {
                writer.null()
            }
            writer.endArray()
        }
        writer.endArray()
        if !document.access.isEmpty {
            writer.key("access")
            writeGrants(document.access, .channel, of: document, to: &writer)
        }
        if !document.roleAccess.isEmpty {
            writer.key("role_access")
            writeGrants(document.roleAccess, .role, of: document, to: &writer)
        }
        if !document.channelRemovals.isEmpty {
            writer.key("removed")
            writer.beginObject()
            for (channel, sequence) in document.channelRemovals {
                writer.key(channel)
                if sequence == document.sequence { writer.null() } else { writer.int(Int64(sequence)) }
            }
            writer.endObject()
        }
        if let expiry = document.expiry {
            writer.key("exp")
            writer.double(expiry.timeIntervalSince1970)
        }
        writer.endObject()
        return writer.bytes
    }

    /// ``grantsJSON(_:_:of:)`` written to `writer`.
    private static func writeGrants(
        _ grants: [String: Set<String>], _ kind: DocumentGrant.Kind, of document: StoredDocument,
        to writer: inout JSONWriter
    ) {
        writer.beginObject()
        for (principal, targets) in grants {
            writer.key(principal)
            writer.beginObject()
            for target in targets {
                let grant = DocumentGrant(kind: kind, principal: principal, target: target)
                writer.key(target)
                let sequence = document.grantSequences[grant] ?? document.sequence
                if sequence == document.sequence { writer.null() } else { writer.int(Int64(sequence)) }
            }
            writer.endObject()
        }
        writer.endObject()
    }

    /// `{principal: {channel or role: sequence of the grant}}`, as Sync Gateway's `_sync.access` and `role_access`.
    static func grantsJSON(
        _ grants: [String: Set<String>], _ kind: DocumentGrant.Kind, of document: StoredDocument
    ) -> JSONValue {
        var json: [String: JSONValue] = [:]
        for (principal, targets) in grants {
            var sequences: [String: JSONValue] = [:]
            for target in targets {
                let grant = DocumentGrant(kind: kind, principal: principal, target: target)
                sequences[target] = .int(Int64(document.grantSequences[grant] ?? document.sequence))
            }
            json[principal] = .object(sequences)
        }
        return .object(json)
    }

    /// A document from its row.
    ///
    /// - Parameter winnerAsText: Keep the winner's body as its text (``StoredDocument/winnerText``), unparsed.
    static func decode(
        id: String, sequence: UInt64, winnerBody: [UInt8], metadata: [UInt8], winnerAsText: Bool = false
    ) throws(GatewayError) -> StoredDocument {
        do {
            let json = try JSONValue(parsing: metadata)
            guard case .array(let history)? = json["history"] else { throw corrupt(id) }
            var document = StoredDocument(id: id)
            document.sequence = sequence
            let nodes = try Self.nodes(of: history, id: id) { revision, channels in document.channels[revision] = channels }
            document.tree = RevisionTree(nodes: nodes)
            if winnerAsText, let winner = document.tree.winner {
                document.winnerText = StoredDocument.BodyText(revision: winner.id, bytes: winnerBody)
            } else if let winner = document.tree.winner {
                document.tree.setBody(try JSONValue(parsing: winnerBody), of: winner.id)
            }
            document.access = readGrants(json["access"], .channel, into: &document)
            document.roleAccess = readGrants(json["role_access"], .role, into: &document)
            for (channel, sequence) in json["removed"]?.objectValue ?? [:] {
                switch sequence {
                case .null: document.channelRemovals[channel] = document.sequence
                case .int(let sequence) where sequence >= 0: document.channelRemovals[channel] = UInt64(sequence)
                default: throw corrupt(id)
                }
            }
            if let seconds = json["exp"]?.doubleValue { document.expiry = Date(timeIntervalSince1970: seconds) }
            return document
        } catch let error as GatewayError {
            throw error
        } catch {
            throw corrupt(id)
        }
    }

    /// The leaf revisions, in winning order, of the document whose metadata this is, without reading its body.
    static func leafRevisions(id: String, metadata: [UInt8]) throws(GatewayError) -> [RevisionID] {
        let history: [JSONValue]
        do {
            guard case .array(let entries)? = try JSONValue(parsing: metadata)["history"] else { throw corrupt(id) }
            history = entries
        } catch {
            throw corrupt(id)
        }
        return RevisionTree(nodes: try nodes(of: history, id: id)).leaves.map(\.id)
    }

    /// The revision tree's nodes from the metadata's `history`, each node's channels handed to `channels`.
    private static func nodes(
        of history: [JSONValue], id: String, channels: (RevisionID, Set<String>) -> Void = { _, _ in }
    ) throws(GatewayError) -> [RevisionTree.Node] {
        var ids: [RevisionID] = []
        var nodes: [RevisionTree.Node] = []
        for entry in history {
            guard case .array(let fields) = entry, fields.count == 5, case .string(let rev) = fields[0],
                case .int(let parent) = fields[1], case .bool(let deleted) = fields[2],
                let revision = try? RevisionID(parsing: rev)
            else { throw corrupt(id) }
            ids.append(revision)
            let parentID = parent >= 0 && Int(parent) < ids.count - 1 ? ids[Int(parent)] : nil
            nodes.append(.init(id: revision, parent: parentID, isDeleted: deleted, body: fields[3].isNull ? nil : fields[3]))
            if case .array(let names) = fields[4] { channels(revision, Set(names.compactMap(\.stringValue))) }
        }
        return nodes
    }

    /// Reads `{principal: {target: seq}}` (or `{principal: [target]}`), recording each grant's sequence.
    private static func readGrants(
        _ json: JSONValue?, _ kind: DocumentGrant.Kind, into document: inout StoredDocument
    ) -> [String: Set<String>] {
        var grants: [String: Set<String>] = [:]
        for (principal, targets) in json?.objectValue ?? [:] {
            let sequences: [(target: String, sequence: UInt64?)] =
                targets.objectValue.map { object in
                    object.map { ($0.key, $0.value.intValue.map { UInt64(max($0, 0)) }) }
                } ?? (targets.arrayValue ?? []).compactMap { $0.stringValue.map { ($0, nil) } }
            grants[principal] = Set(sequences.map(\.target))
            for (target, sequence) in sequences {
                let grant = DocumentGrant(kind: kind, principal: principal, target: target)
                document.grantSequences[grant] = sequence ?? document.sequence
            }
        }
        return grants
    }

    private static func corrupt(_ id: String) -> GatewayError {
        .internalError("The stored metadata of document \"\(id)\" is corrupt")
    }
}
