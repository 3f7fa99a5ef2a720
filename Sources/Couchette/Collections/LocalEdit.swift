import CouchetteCore
import Foundation

/// The write path shared by every kind of save: turns user properties into a stored body, adds the
/// revision to the tree, prunes it, assigns a sequence, writes the row and records the change.
/// Callers are inside ``Database/write(_:)``.
struct LocalEdit {
    let collection: Collection
    let storage: DatabaseStorage

    var database: Database { collection.database }

    /// The keys the body may not carry (they are metadata), and the one special key it may.
    static let metadataKeys: Set<String> = ["_id", "_rev", "_deleted", "_revisions", "_conflicts", "_local_seq"]

    /// Converts user properties to the stored body: installs blobs, turns `_attachments` blobs and inline
    /// data into stubs with `revpos`, drops metadata keys.
    ///
    /// - Parameter generation: The generation of the revision being made, for new attachments' `revpos`.
    /// - Throws: `.badInput` for values that are not JSON or top-level keys starting with `_`.
    func body(from properties: [String: Any], generation: Int) throws -> JSONValue {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(properties.count)
        for (key, value) in properties {
            guard key.utf8.first == UInt8(ascii: "_") else {
                members[key] = try DocumentValues.json(from: value, path: key) { try installBlob($0) }
                continue
            }
            if LocalEdit.metadataKeys.contains(key) { continue }
            if key == "_attachments" {
                members[key] = try attachments(from: value, generation: generation) { try installBlob($0) }
                continue
            }
            if key.hasPrefix("_") {
                throw CouchetteError(
                    .badInput, message: "Top-level property \"\(key)\" is reserved: names starting with '_' are metadata")
            }
            members[key] = try DocumentValues.json(from: value, path: key) { try installBlob($0) }
        }
        return .object(members)
    }

    /// Stores a blob's content in the database's blob store.
    private func installBlob(_ blob: Blob) throws {
        guard let store = database.blobStore else { throw CouchetteError(.notOpen, message: "The database is closed") }
        try blob.install(into: store)
    }

    private func attachments(from value: Any?, generation: Int, install: (Blob) throws -> Void) throws -> JSONValue {
        guard let value, !(value is NSNull) else { return .object([:]) }
        let entries: [String: Any]
        if let json = value as? JSONValue, case .object(let members) = json {
            entries = members
        } else if let dictionary = value as? [String: Any] {
            entries = dictionary
        } else {
            throw CouchetteError(.badInput, message: "_attachments must be a dictionary")
        }
        var result: [String: JSONValue] = [:]
        for (name, entry) in entries {
            if let blob = entry as? Blob {
                try install(blob)
                result[name] = try JSONValue(foundationObject: blob.attachmentMetadata(revpos: generation))
                continue
            }
            let json = try DocumentValues.json(from: entry, path: "_attachments.\(name)", onBlob: install)
            var metadata: AttachmentMetadata
            do { metadata = try AttachmentMetadata(json: json) } catch { throw CouchetteError.wrap(error) }
            if let data = metadata.data {
                let blob = Blob(contentType: metadata.contentType, data: Data(data))
                try install(blob)
                metadata = AttachmentMetadata(
                    contentType: metadata.contentType, length: data.count, digest: .sha1(of: data),
                    revpos: generation, isStub: true)
            } else {
                metadata = metadata.stub
                if metadata.revpos == nil { metadata.revpos = generation }
            }
            result[name] = metadata.json
        }
        return .object(result)
    }

    /// The generation the next local edit will get (mirrors ``CouchetteCore/RevisionTree/addLocalEdit``).
    static func nextGeneration(tree: CouchetteCore.RevisionTree, parent: RevisionID?, allowConflict: Bool) -> Int {
        if let parent { return parent.generation + 1 }
        if let winner = tree.winner, winner.isDeleted || !allowConflict { return winner.id.generation + 1 }
        return 1
    }

    /// Adds a local edit and writes the document.
    ///
    /// - Returns: The new revision's ID and the stored record.
    func commit(
        documentID: String, existing: DocumentRecord?, tree: CouchetteCore.RevisionTree, parent: RevisionID?,
        body: JSONValue, deleted: Bool, allowConflict: Bool, serializedBody: [UInt8]? = nil
    ) throws -> (revision: RevisionID, record: DocumentRecord) {
        var tree = tree
        let revision: RevisionID
        let serialized = serializedBody ?? body.serialized()
        do {
            revision = try tree.addLocalEdit(
                parent: parent, body: body, deleted: deleted, allowConflict: allowConflict, serializedBody: serialized)
        } catch {
            throw CouchetteError.wrap(error)
        }
        let record = try store(
            documentID: documentID, existing: existing, tree: tree, changed: revision, source: nil,
            serializedChange: serialized)!
        return (revision, record)
    }

    /// Prunes and writes a changed tree, and records the change to `changed`.
    ///
    /// - Parameter onlyIfAbsent: Insert the row only if the document does not exist yet; returns nil (and
    ///   changes nothing) when it does. Lets a save of a new document skip reading it first.
    @discardableResult
    func store(
        documentID: String, existing: DocumentRecord?, tree: CouchetteCore.RevisionTree, changed: RevisionID,
        source: URL?, serializedChange: [UInt8]? = nil, onlyIfAbsent: Bool = false
    ) throws -> DocumentRecord? {
        var tree = tree
        tree.prune(toDepth: Int(database.config.maxRevTreeDepth))
        // Leaves keep their bodies; of the ancestors the changed revision's parent does (the previous current
        // revision, still readable through `revision(withID:)`) and, while the document is in conflict, the parent
        // of each live leaf (the base an app's n-way merge compares the branches with). Older bodies are not kept.
        var keptParents = Set([tree[changed]?.parent].compactMap { $0 })
        if tree.isConflicted {
            for leaf in tree.leaves where !leaf.isDeleted { if let parent = leaf.parent { keptParents.insert(parent) } }
        }
        if tree.count > 2 { tree.removeAncestorBodies(keeping: keptParents) }
        let winner = tree.winner!
        let inConflict = tree.isConflicted
        // The previous current revision's body may be known only as the row's bytes (saves do not parse it).
        let previousWinner = existing.flatMap { try? RevisionID(parsing: $0.revisionID) }
        // So may the other bodies the stored tree kept (read unparsed). Bytes are kept by the rule parsed bodies
        // follow: all in a tree of two, else leaves and the kept parents; the winner's is the row's.
        var unparsed = existing?.treeBodies ?? [:]
        if let existing, let previousWinner { unparsed[previousWinner] = existing.body }
        let rawBodies = unparsed.filter { id, _ in
            id != winner.id && tree[id]?.body == nil && (tree.count <= 2 || tree.isLeaf(id) || keptParents.contains(id))
        }
        let body: [UInt8]
        let hasBlobs: Bool
        if winner.id == changed {
            let changedBody = winner.body ?? .object([:])
            body = serializedChange ?? changedBody.serialized()
            hasBlobs = DocumentValues.containsBlobs(changedBody)
        } else if let existing, winner.id == previousWinner, winner.body == nil {
            body = existing.body
            hasBlobs = existing.flags.contains(.hasAttachments)
        } else if winner.body == nil, let raw = existing?.treeBodies[winner.id] {
            // Another kept leaf wins (the current one was deleted), its body read unparsed.
            body = raw
            hasBlobs = (try? JSONValue(parsing: raw)).map(DocumentValues.containsBlobs) ?? false
        } else {
            let winnerBody = winner.body ?? .object([:])
            body = winnerBody.serialized()
            hasBlobs = DocumentValues.containsBlobs(winnerBody)
        }
        var flags: DocumentRecordFlags = []
        if winner.isDeleted { flags.insert(.deleted) }
        if inConflict { flags.insert(.conflicted) }
        if hasBlobs { flags.insert(.hasAttachments) }
        let record = DocumentRecord(
            collectionID: collection.id, documentID: documentID, sequence: 0, flags: flags,
            revisionID: winner.id.description, body: body, tree: tree, expiration: existing?.expiration,
            modified: Date().timeIntervalSince1970)
        let mode: DatabaseStorage.WriteMode = onlyIfAbsent ? .insertIfAbsent : (existing == nil ? .insert : .update)
        return try write(
            record, mode: mode, rawBodies: rawBodies, changed: changed, isDeletion: tree[changed]?.isDeleted ?? false,
            source: source)
    }

    /// A save on top of the current revision of a document whose tree is one branch (most are), prepared
    /// without building the tree (``RevisionTreeCodec/LinearHistory``) and, when the document was read earlier,
    /// outside the database lock: ``commit(_:documentID:)`` writes it if the row is still as it was read.
    struct LinearEdit {
        /// The new revision (also as text), its body and the tree to store.
        var revision: RevisionID
        var revisionText: String
        var body: [UInt8]
        var tree: [UInt8]
        /// The row's sequence, tree and body as read.
        var expectedSequence: UInt64
        var expectedTree: [UInt8]
        var expectedBody: [UInt8]

        /// - Parameters:
        ///   - current: The current revision, its sequence, stored tree and body, as read.
        ///   - body: The new body: text patched from the current one (``JSONObjectPatch``: no metadata, blobs or
        ///     numbers outside their canonical form, so the text is the digest's input as it is).
        /// - Returns: Nil when the tree is not one branch ending with `current`.
        init?(
            current revisionID: String, sequence: UInt64, storedTree: [UInt8], storedBody: [UInt8], body: [UInt8],
            maximumDepth: Int
        ) throws {
            guard let history = RevisionTreeCodec.LinearHistory(storedTree, current: revisionID),
                let parent = try? RevisionID(parsing: revisionID)
            else { return nil }
            do {
                revision = try RevisionID.next(after: parent, body: .object([:]), deleted: false, serializedBody: body)
            } catch {
                throw CouchetteError.wrap(error)
            }
            self.body = body
            revisionText = revision.description
            tree = history.appending(revisionText, currentBody: storedBody, maximumDepth: maximumDepth)
            expectedSequence = sequence
            expectedTree = storedTree
            expectedBody = storedBody
        }
    }

    /// A new document's first revision, prepared from its values' text (``CouchetteCore/PlainJSONSerializer``)
    /// outside the database lock: ``insert(_:documentID:source:)`` writes it unless the document exists.
    struct NewDocument {
        var revision: RevisionID
        var revisionText: String
        var body: [UInt8]
        var tree: [UInt8]

        init(body: [UInt8]) throws {
            let revision: RevisionID
            do {
                revision = try RevisionID.next(after: nil, body: .object([:]), deleted: false, serializedBody: body)
            } catch {
                throw CouchetteError.wrap(error)
            }
            self.init(revision: revision, body: body)
        }

        /// A replicated revision with no ancestors, its body already serialized (and holding no blob).
        init(revision: RevisionID, body: [UInt8]) {
            self.revision = revision
            self.body = body
            revisionText = revision.description
            tree = RevisionTreeCodec.encodeSingle(revisionText, deleted: false)
        }
    }

    /// Inserts a prepared new document; `source` is the remote a replicated one came from.
    ///
    /// - Returns: The stored record, or nil when the document exists (nothing written).
    func insert(_ new: NewDocument, documentID: String, source: URL? = nil) throws -> DocumentRecord? {
        var record = DocumentRecord(
            collectionID: collection.id, documentID: documentID, sequence: 0, flags: [],
            revisionID: new.revisionText, body: new.body, tree: nil, expiration: nil,
            modified: Date().timeIntervalSince1970)
        record.encodedTree = new.tree
        return try write(
            record, mode: .insertIfAbsent, encodedTree: new.tree, changed: new.revision, changedText: new.revisionText,
            isDeletion: false, source: source)
    }

    /// Writes a prepared edit if the document's row still has the sequence and tree it was prepared from.
    ///
    /// - Returns: The stored record, or nil when the row changed (nothing written).
    func commit(_ edit: LinearEdit, documentID: String) throws -> DocumentRecord? {
        var record = DocumentRecord(
            collectionID: collection.id, documentID: documentID, sequence: 0, flags: [],
            revisionID: edit.revisionText, body: edit.body, tree: nil, expiration: nil,
            modified: Date().timeIntervalSince1970)
        record.encodedTree = edit.tree
        return try write(
            record, mode: .updateIfUnchanged(sequence: edit.expectedSequence, tree: edit.expectedTree),
            encodedTree: edit.tree, changed: edit.revision, changedText: edit.revisionText, isDeletion: false,
            source: nil)
    }

    /// Writes the row with the next sequence and records the change.
    private func write(
        _ record: DocumentRecord, mode: DatabaseStorage.WriteMode, rawBodies: [RevisionID: [UInt8]] = [:],
        encodedTree: [UInt8]? = nil, changed: RevisionID, changedText: String? = nil, isDeletion: Bool, source: URL?
    ) throws -> DocumentRecord? {
        let changedText = changedText ?? changed.description
        var record = record
        record.sequence = database.peekNextSequence(collectionID: collection.id)
        guard try storage.write(record, mode: mode, rawBodies: rawBodies, encodedTree: encodedTree) else { return nil }
        database.takeNextSequence(record.sequence, collectionID: collection.id)
        database.recordChange(
            DocumentChange(
                database: database, collection: collection, documentID: record.documentID,
                revisionID: changedText, sequence: record.sequence, isDeletion: isDeletion,
                isCurrentRevision: record.revisionID == changedText,
                inConflict: record.flags.contains(.conflicted), source: source),
            external: source != nil)
        Log.shared.emit(.verbose, .database, "Saved \(record.documentID) \(changedText) (seq \(record.sequence))")
        return record
    }

    /// Saves a document that was never saved before without reading it first: the row is inserted only if
    /// absent. Returns nil when the document exists, for the caller to take the ordinary path.
    func insertIfAbsent(documentID: String, body: JSONValue) throws -> DocumentRecord? {
        var tree = CouchetteCore.RevisionTree()
        let serialized = body.serialized()
        let revision: RevisionID
        do {
            revision = try tree.addLocalEdit(parent: nil, body: body, deleted: false, serializedBody: serialized)
        } catch {
            throw CouchetteError.wrap(error)
        }
        return try store(
            documentID: documentID, existing: nil, tree: tree, changed: revision, source: nil,
            serializedChange: serialized, onlyIfAbsent: true)
    }
}
