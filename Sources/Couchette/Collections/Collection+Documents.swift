import CouchetteCore
import Foundation

extension Collection {
    /// Runs `body` with a storage to read from (``Database/read(_:)``: a snapshot that does not wait for writes),
    /// after checking this collection still exists. `body` must not take the database's lock.
    func read<T>(_ body: (DatabaseStorage) throws -> T) throws -> T {
        try database.requireLive(self)
        return try database.read(body)
    }

    /// Runs `body` in a write transaction, after checking this collection still exists.
    func modify<T>(_ body: (LocalEdit) throws -> T) throws -> T {
        try database.write { storage in
            _ = try database.requireRow(self)
            return try body(LocalEdit(collection: self, storage: storage))
        }
    }

    // MARK: - Reading

    /// The current revision of a document, or nil when it does not exist or is deleted.
    ///
    /// - Throws: `.notOpen` when the database is closed, `.notFound` when the collection was deleted.
    public func document(id: String) throws -> Document? {
        guard
            let record = try read({ storage in
                try storage.document(collectionID: self.id, id: id, withTree: true, decodeTree: false)
            }),
            !record.isDeleted
        else { return nil }
        return Document(
            id: id, revisionID: record.revisionID, sequence: record.sequence, collection: self, rawBody: record.body,
            timestamp: record.timestamp,
            storedTree: record.flags.isDisjoint(with: [.hasAttachments, .conflicted]) ? record.encodedTree : nil)
    }

    // MARK: - Saving

    /// Saves a document; if it changed since it was read, the save overwrites the newer revision.
    public func save(document: MutableDocument) throws {
        try save(document: document, concurrencyControl: .lastWriteWins)
    }

    /// Saves a document with the given conflict behaviour.
    ///
    /// Saving a document whose properties equal the current revision's makes no new revision.
    ///
    /// - Returns: false when `failOnConflict` found a newer revision (nothing saved).
    /// - Throws: `.badInput` for values that are not JSON or an invalid ID, `.forbidden` when read-only,
    ///   `.notOpen` when closed, `.notFound` when the collection was deleted.
    @discardableResult
    public func save(document: MutableDocument, concurrencyControl: ConcurrencyControl) throws -> Bool {
        try save(document: document) { _, _ in concurrencyControl == .lastWriteWins }
    }

    /// Saves a document, calling `conflictHandler` when it changed since it was read.
    ///
    /// The handler gets the document being saved and the current one (nil if deleted); it may merge into
    /// the first, and returns true to save it on top of the current revision or false to give up.
    ///
    /// - Returns: Whether the document was saved.
    @discardableResult
    public func save(
        document: MutableDocument, conflictHandler: (MutableDocument, Document?) -> Bool
    ) throws -> Bool {
        try DatabaseNames.validateDocumentID(document.id)
        // A document read here and changed only in top-level scalars: its stored text patched (before taking the
        // lock), used when the revision it was read at is still the current one.
        let patched = document.patchedStoredBody()
        let maximumDepth = Int(database.config.maxRevTreeDepth)
        // The most common edit (top-level scalars of a document read here, one branch) is prepared before taking
        // the lock, with the tree read with the document, and written if its row did not change since.
        let prepared = try patched.flatMap { patched in
            try patched.storedTree.flatMap { tree in
                try LocalEdit.LinearEdit(
                    current: patched.revisionID, sequence: patched.sequence, storedTree: tree,
                    storedBody: patched.storedBody, body: patched.body, maximumDepth: maximumDepth)
            }
        }
        // A new document of plain values: its text written straight from them, its revision made, before the lock.
        let new = try document.revisionID == nil
            ? PlainJSONSerializer.serialized(document.editedValues()).map(LocalEdit.NewDocument.init) : nil
        let saved: (record: DocumentRecord, members: [String: JSONValue]?)? = try modify { edit in
            if let prepared, prepared.body != prepared.expectedBody,
                let record = try edit.commit(prepared, documentID: document.id)
            {
                return (record, nil)
            }
            if let new, let record = try edit.insert(new, documentID: document.id) { return (record, nil) }
            if document.revisionID == nil, new == nil {
                // Never saved: most likely a new document, so try inserting before reading anything.
                let body = try edit.body(from: document.editedValues(), generation: 1)
                if let record = try edit.insertIfAbsent(documentID: document.id, body: body) {
                    return (record, body.objectValue ?? [:])
                }
            }
            var existing = try edit.storage.document(
                collectionID: id, id: document.id, withTree: true, parseWinnerBody: false, decodeTree: patched == nil)
            if let patched, let current = existing, current.revisionID == patched.revisionID, !current.isDeleted,
                !current.flags.contains(.hasAttachments)
            {
                if current.body == patched.body { return (current, nil) }
                if let encodedTree = current.encodedTree,
                    let linear = try LocalEdit.LinearEdit(
                        current: current.revisionID, sequence: current.sequence, storedTree: encodedTree,
                        storedBody: current.body, body: patched.body, maximumDepth: maximumDepth),
                    let record = try edit.commit(linear, documentID: document.id)
                {
                    return (record, nil)
                }
                // Not one branch (in conflict): the patched text on top of the current revision, through the tree.
                var decoded = current
                (decoded.tree, decoded.treeBodies) = try RevisionTreeCodec.decodeKeepingBodiesRaw(current.encodedTree ?? [])
                // The tree keeps no body for the new current revision (the row has it, written from the text), and
                // the digest is made from the text: an empty object stands for the body.
                let (_, record) = try edit.commit(
                    documentID: document.id, existing: decoded, tree: decoded.tree!,
                    parent: try? RevisionID(parsing: current.revisionID), body: .object([:]), deleted: false,
                    allowConflict: false, serializedBody: patched.body)
                return (record, nil)
            }
            if let encodedTree = existing?.encodedTree {
                (existing!.tree, existing!.treeBodies) = try RevisionTreeCodec.decodeKeepingBodiesRaw(encodedTree)
                existing!.encodedTree = nil
            }
            let tree = existing?.tree ?? CouchetteCore.RevisionTree()
            let current = existing.map { record in try? RevisionID(parsing: record.revisionID) } ?? nil
            let expected = document.revisionID
            // A document missing here (never saved, or purged) is simply created.
            let isConflict =
                existing.map { expected != $0.revisionID && !(expected == nil && $0.isDeleted) } ?? false
            if isConflict {
                let currentDocument =
                    existing!.isDeleted
                    ? nil
                    : Document(
                        id: document.id, revisionID: existing!.revisionID, sequence: existing!.sequence,
                        collection: self, rawBody: existing!.body, timestamp: existing!.timestamp)
                guard conflictHandler(document, currentDocument) else { return nil }
            }
            let generation = LocalEdit.nextGeneration(tree: tree, parent: current, allowConflict: false)
            let body = try edit.body(from: document.editedValues(), generation: generation)
            let serialized = body.serialized()
            if let existing, !existing.isDeleted, existing.body == serialized {
                return (existing, body.objectValue ?? [:])
            }
            let parent = (existing?.isDeleted ?? true) ? nil : current
            let (_, record) = try edit.commit(
                documentID: document.id, existing: existing, tree: tree, parent: parent, body: body, deleted: false,
                allowConflict: false, serializedBody: serialized)
            return (record, body.objectValue ?? [:])
        }
        guard let saved else { return false }
        if let members = saved.members {
            document.didSave(
                revisionID: saved.record.revisionID, sequence: saved.record.sequence, collection: self,
                members: members, timestamp: saved.record.timestamp)
        } else {
            document.didSave(
                revisionID: saved.record.revisionID, sequence: saved.record.sequence, collection: self,
                storedBody: saved.record.body, storedTree: saved.record.encodedTree, timestamp: saved.record.timestamp)
        }
        return true
    }

    // MARK: - Deleting

    /// Deletes a document (a tombstone revision that replicates); a newer revision is deleted too.
    public func delete(document: Document) throws {
        try delete(document: document, concurrencyControl: .lastWriteWins)
    }

    /// Deletes a document with the given conflict behaviour.
    ///
    /// - Returns: false when `failOnConflict` found a newer revision.
    /// - Throws: `.notFound` when the document does not exist or is already deleted.
    @discardableResult
    public func delete(document: Document, concurrencyControl: ConcurrencyControl) throws -> Bool {
        let deleted: DocumentRecord? = try modify { edit in
            guard
                let existing = try edit.storage.document(
                    collectionID: id, id: document.id, withTree: true, parseWinnerBody: false),
                !existing.isDeleted
            else { throw CouchetteError(.notFound, message: "Document \"\(document.id)\" does not exist") }
            if document.revisionID != existing.revisionID, concurrencyControl == .failOnConflict { return nil }
            let current = try? RevisionID(parsing: existing.revisionID)
            let (_, record) = try edit.commit(
                documentID: document.id, existing: existing, tree: existing.tree!, parent: current,
                body: .object([:]), deleted: true, allowConflict: false)
            return record
        }
        guard let deleted else { return false }
        if let mutable = document as? MutableDocument {
            mutable.didSave(
                revisionID: deleted.revisionID, sequence: deleted.sequence, collection: self, members: [:],
                timestamp: deleted.timestamp)
        }
        return true
    }

    // MARK: - Purging

    /// Removes every revision of a document, locally only (a purge does not replicate).
    public func purge(document: Document) throws { try purge(id: document.id) }

    /// Removes every revision of a document, locally only.
    ///
    /// - Throws: `.notFound` when there is no such document.
    public func purge(id documentID: String) throws {
        try modify { edit in
            try database.persistLastSequence(collectionID: id, in: edit.storage)
            guard try edit.storage.removeDocument(collectionID: id, id: documentID) else {
                throw CouchetteError(.notFound, message: "Document \"\(documentID)\" does not exist")
            }
            database.recordChange(
                DocumentChange(
                    database: database, collection: self, documentID: documentID, revisionID: "",
                    sequence: 0, isDeletion: true, isCurrentRevision: true, inConflict: false, source: nil),
                external: false)
        }
    }

    /// Removes the given leaf revisions of documents, and the ancestors no other leaf needs, locally only
    /// (CouchDB's `_purge`). A document left with no revision is removed.
    ///
    /// - Parameter revisions: Revision IDs to purge, by document ID.
    /// - Returns: The revisions purged, by document ID (documents with none purged are left out).
    /// - Throws: `.badInput` for a malformed revision ID.
    @discardableResult
    public func purgeRevisions(_ revisions: [String: [String]]) throws -> [String: [String]] {
        var parsed: [String: [RevisionID]] = [:]
        for (documentID, texts) in revisions {
            do {
                parsed[documentID] = try texts.map { text throws(CoreError) in try RevisionID(parsing: text) }
            } catch {
                throw CouchetteError.wrap(error)
            }
        }
        return try modify { edit in
            var result: [String: [String]] = [:]
            for (documentID, wanted) in parsed {
                guard let existing = try edit.storage.document(collectionID: id, id: documentID, withTree: true),
                    var tree = existing.tree
                else { continue }
                let purged = tree.purge(wanted)
                guard !purged.isEmpty else { continue }
                result[documentID] = purged.map(\.description)
                try database.persistLastSequence(collectionID: id, in: edit.storage)
                if tree.isEmpty {
                    try edit.storage.removeDocument(collectionID: id, id: documentID)
                    database.recordChange(
                        DocumentChange(
                            database: database, collection: self, documentID: documentID, revisionID: "",
                            sequence: 0, isDeletion: true, isCurrentRevision: true, inConflict: false, source: nil),
                        external: false)
                } else {
                    try edit.store(
                        documentID: documentID, existing: existing, tree: tree, changed: tree.winner!.id, source: nil)
                }
            }
            return result
        }
    }

    // MARK: - Expiration

    /// Sets when a document expires (is purged); nil clears it.
    ///
    /// - Throws: `.notFound` when there is no such document.
    public func setDocumentExpiration(id documentID: String, expiration: Date?) throws {
        try modify { edit in
            guard try edit.storage.setExpiration(expiration?.timeIntervalSince1970, collectionID: id, id: documentID)
            else { throw CouchetteError(.notFound, message: "Document \"\(documentID)\" does not exist") }
        }
        database.expirySweeper?.schedule()
    }

    /// When a document expires, or nil.
    public func getDocumentExpiration(id documentID: String) throws -> Date? {
        try read { storage in
            try storage.document(collectionID: id, id: documentID, withTree: false)?.expiration
        }.map { Date(timeIntervalSince1970: $0) }
    }
}
