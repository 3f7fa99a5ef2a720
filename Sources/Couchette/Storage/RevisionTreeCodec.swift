import CouchetteCore

/// Stores a revision tree compactly as JSON: `[[rev, parentIndex, deleted, body], …]` in generation order,
/// `parentIndex` -1 for roots, `body` null when not kept. The winner's body is left out (it lives in the
/// row's `body` column) and put back on decoding.
enum RevisionTreeCodec {
    /// Encodes a tree.
    ///
    /// - Parameter rawBodies: Serialized bodies of nodes whose body is not parsed in `tree` (the previous
    ///   current revision, read as bytes); written as they are.
    static func encode(_ tree: CouchetteCore.RevisionTree, rawBodies: [RevisionID: [UInt8]] = [:]) -> [UInt8] {
        let winnerID = tree.winner?.id
        if tree.count == 1, let only = tree.winner, only.parent == nil,
            !only.id.digest.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
        {
            return encodeSingle(only.id.description, deleted: only.isDeleted)
        }
        let nodes = tree.nodes
        var index: [RevisionID: Int] = [:]
        index.reserveCapacity(nodes.count)
        for (offset, node) in nodes.enumerated() { index[node.id] = offset }
        var output: [UInt8] = [UInt8(ascii: "[")]
        output.reserveCapacity(64 * nodes.count + rawBodies.values.reduce(0) { $0 + $1.count })
        for (offset, node) in nodes.enumerated() {
            let body: [UInt8] =
                if node.id == winnerID {
                    Array("null".utf8)
                } else if let body = node.body {
                    body.serialized()
                } else {
                    rawBodies[node.id] ?? Array("null".utf8)
                }
            appendEntry(
                to: &output, revision: JSONValue.string(node.id.description).serialized(),
                parent: node.parent.flatMap { index[$0] } ?? -1, deleted: node.isDeleted, body: body)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }

    /// A tree of one revision without a parent, `[["1-…",-1,false,null]]` (the winner's body is the row's): what
    /// most documents store. `revision` must need no escaping (a revision ID of ours never does).
    static func encodeSingle(_ revision: String, deleted: Bool) -> [UInt8] {
        Array("[[\"\(revision)\",-1,\(deleted),null]]".utf8)
    }

    /// Appends one entry, `[rev,parentIndex,deleted,body]`, after a comma unless it is the first; `revision` and
    /// `body` are JSON text.
    static func appendEntry(
        to output: inout [UInt8], revision: some Swift.Collection<UInt8>, parent: Int, deleted: Bool,
        body: some Swift.Collection<UInt8>
    ) {
        if output.count > 1 { output.append(UInt8(ascii: ",")) }
        output.append(UInt8(ascii: "["))
        output.append(contentsOf: revision)
        output.append(UInt8(ascii: ","))
        appendDecimal(parent, to: &output)
        output.append(contentsOf: deleted ? ",true,".utf8 : ",false,".utf8)
        output.append(contentsOf: body)
        output.append(UInt8(ascii: "]"))
    }

    /// Appends `value` in decimal (no string made: this runs for every entry of every tree saved).
    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8((magnitude / divisor) % 10))
            divisor /= 10
        }
    }

    /// Whether `bytes` are exactly `value` in decimal, as ``appendDecimal(_:to:)`` writes it (no leading zero, no
    /// `-0`).
    static func isDecimal(_ bytes: some Swift.Collection<UInt8>, _ value: Int) -> Bool {
        var digits = bytes[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard let first = digits.first, digits.count <= 18, first != UInt8(ascii: "0") || digits.count == 1 else {
            return false
        }
        var parsed = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return false }
            parsed = parsed * 10 + Int(digit - UInt8(ascii: "0"))
        }
        guard !(negative && parsed == 0) else { return false }
        return (negative ? -parsed : parsed) == value
    }

    /// - Throws: `.corrupt` when the stored tree cannot be read.
    static func decode(_ bytes: [UInt8], winnerBody: JSONValue?) throws(CouchetteError) -> CouchetteCore.RevisionTree {
        do {
            guard case .array(let entries) = try JSONValue(parsing: bytes) else { throw corrupt() }
            var ids: [RevisionID] = []
            ids.reserveCapacity(entries.count)
            var nodes: [CouchetteCore.RevisionTree.Node] = []
            for entry in entries {
                guard case .array(let fields) = entry, fields.count == 4, case .string(let rev) = fields[0],
                    case .int(let parent) = fields[1], case .bool(let deleted) = fields[2]
                else { throw corrupt() }
                let id = try RevisionID(parsing: rev)
                ids.append(id)
                let parentID = parent >= 0 && Int(parent) < ids.count ? ids[Int(parent)] : nil
                nodes.append(.init(id: id, parent: parentID, isDeleted: deleted, body: fields[3].isNull ? nil : fields[3]))
            }
            var tree = CouchetteCore.RevisionTree(nodes: nodes)
            if let winner = tree.winner, let winnerBody { tree.setBody(winnerBody, of: winner.id) }
            return tree
        } catch let error as CouchetteError {
            throw error
        } catch {
            throw corrupt()
        }
    }

    /// Decodes a tree without parsing the bodies it keeps (saves only add to the tree and write it back): the
    /// nodes have no bodies, and the bodies come back as their bytes. Falls back to ``decode(_:winnerBody:)`` for
    /// anything unusual.
    static func decodeKeepingBodiesRaw(_ bytes: [UInt8]) throws(CouchetteError) -> (
        tree: CouchetteCore.RevisionTree, bodies: [RevisionID: [UInt8]]
    ) {
        let skeleton: (nodes: [CouchetteCore.RevisionTree.Node], bodies: [RevisionID: [UInt8]])? = bytes.withUnsafeBufferPointer { buffer in
            guard let entries = JSONPathScanner.elementRanges(in: buffer) else { return nil }
            var ids: [RevisionID] = []
            var nodes: [CouchetteCore.RevisionTree.Node] = []
            var bodies: [RevisionID: [UInt8]] = [:]
            ids.reserveCapacity(entries.count)
            nodes.reserveCapacity(entries.count)
            for entry in entries {
                guard let fields = JSONPathScanner.elementRanges(in: UnsafeBufferPointer(rebasing: buffer[entry])),
                    fields.count == 4
                else { return nil }
                let base = entry.lowerBound
                let rev = buffer[(base + fields[0].lowerBound)..<(base + fields[0].upperBound)]
                // A plain string (no escapes) between quotes.
                guard rev.count >= 2, rev.first == UInt8(ascii: "\""), rev.last == UInt8(ascii: "\""),
                    !rev.contains(UInt8(ascii: "\\")),
                    let id = try? RevisionID(parsing: String(decoding: rev.dropFirst().dropLast(), as: UTF8.self)),
                    let parent = Int(String(decoding: buffer[(base + fields[1].lowerBound)..<(base + fields[1].upperBound)], as: UTF8.self))
                else { return nil }
                let deleted = buffer[base + fields[2].lowerBound] == UInt8(ascii: "t")
                let body = buffer[(base + fields[3].lowerBound)..<(base + fields[3].upperBound)]
                if !body.elementsEqual("null".utf8) { bodies[id] = Array(body) }
                ids.append(id)
                nodes.append(.init(id: id, parent: parent >= 0 && parent < ids.count - 1 ? ids[parent] : nil, isDeleted: deleted, body: nil))
            }
            return (nodes, bodies)
        }
        guard let skeleton else { return (try decode(bytes, winnerBody: nil), [:]) }
        return (CouchetteCore.RevisionTree(nodes: skeleton.nodes), skeleton.bodies)
    }

    /// The leaves of a stored tree other than `current`, without building the tree (the changes feed with
    /// conflicts): none for the common one-revision tree, found by comparing bytes.
    static func otherLeaves(_ bytes: [UInt8], current: String) throws(CouchetteError)
        -> [(revisionID: String, isDeleted: Bool)]
    {
        if bytes.count < 64 + current.utf8.count, bytes.elementsEqual("[[\"\(current)\",-1,false,null]]".utf8)
            || bytes.elementsEqual("[[\"\(current)\",-1,true,null]]".utf8)
        {
            return []
        }
        guard case .array(let entries)? = try? JSONValue(parsing: bytes) else { throw corrupt() }
        var parents = Set<Int64>()
        var nodes: [(revisionID: String, isDeleted: Bool)] = []
        for entry in entries {
            guard case .array(let fields) = entry, fields.count == 4, case .string(let rev) = fields[0],
                case .int(let parent) = fields[1], case .bool(let deleted) = fields[2]
            else { throw corrupt() }
            parents.insert(parent)
            nodes.append((rev, deleted))
        }
        return nodes.enumerated().compactMap { index, node in
            parents.contains(Int64(index)) || node.revisionID == current ? nil : node
        }
    }

    private static func corrupt() -> CouchetteError {
        CouchetteError(.corrupt, message: "A stored revision tree is corrupt")
    }
}
