import CouchetteCore
import CouchetteSQLite

// MARK: - GrantIndex

/// The `grants` table of ``SQLiteGatewayStorage``: every grant the current revisions of documents make, keyed
/// by principal, kind and the sequence of the change that first made it (spec: sync-function.md §7.2).
///
/// A user's or role's granted channels and roles are read from here when it is loaded, so they are never stale;
/// the sequences drive `_changes` backfill. Rows are keyed by principal then sequence, so a write appends to each
/// principal's rows instead of inserting at random places; the rows of a document are found through its
/// ``StoredDocument/grantSequences``. A grant that a new winning revision repeats keeps its row and sequence; one
/// it drops loses its row (revocation).
enum GrantIndex {
    /// The table (schema version 3).
    static let createTable = """
        CREATE TABLE grants (
            principal TEXT NOT NULL,
            kind INTEGER NOT NULL,
            sequence INTEGER NOT NULL,
            target TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            PRIMARY KEY (principal, kind, sequence, target)
        ) WITHOUT ROWID;
        """

    /// Brings the rows of `document` (at its new sequence) up to date with its grants, and records in its
    /// ``StoredDocument/grantSequences`` when each was first made.
    ///
    /// - Parameter previous: The document as stored before this change; nil for a new (or purged) document.
    static func update(_ document: inout StoredDocument, previous: StoredDocument?, _ connection: Connection) throws {
        let wanted = document.grants
        let before = previous?.grantSequences ?? [:]
        var sequences: [DocumentGrant: UInt64] = [:]
        for (grant, sequence) in before where !wanted.contains(grant) {
            try delete(grant, at: sequence, connection)
        }
        for grant in wanted {
            if let sequence = before[grant] {
                sequences[grant] = sequence
            } else {
                try insert(grant, at: document.sequence, documentID: document.id, connection)
                sequences[grant] = document.sequence
            }
        }
        document.grantSequences = sequences
    }

    /// Inserts a row for each of the document's grants at its recorded sequence (rebuilding the index).
    static func insertRows(of document: StoredDocument, _ connection: Connection) throws {
        for grant in document.grants {
            try insert(grant, at: document.grantSequences[grant] ?? document.sequence, documentID: document.id, connection)
        }
    }

    /// Deletes the rows of a document that is going away (purge).
    static func deleteRows(of document: StoredDocument, _ connection: Connection) throws {
        for (grant, sequence) in document.grantSequences { try delete(grant, at: sequence, connection) }
    }

    /// The targets of `kind` granted to `principal`, with their earliest sequence.
    static func grants(
        kind: DocumentGrant.Kind, to principal: String, _ connection: Connection
    ) throws -> [String: UInt64] {
        var grants: [String: UInt64] = [:]
        try connection.forEachRow(
            "SELECT target, sequence FROM grants WHERE principal = ? AND kind = ? ORDER BY sequence", principal,
            Int64(kind.rawValue)
        ) { row in
            let target = row.string(at: 0)
            if grants[target] == nil { grants[target] = UInt64(row.int64(at: 1)) }
        }
        return grants
    }

    // MARK: - Rows

    private static func insert(
        _ grant: DocumentGrant, at sequence: UInt64, documentID: String, _ connection: Connection
    ) throws {
        try connection.execute(
            "INSERT INTO grants (principal, kind, sequence, target, doc_id) VALUES (?, ?, ?, ?, ?)"
        ) { statement in
            try bindKey(of: grant, at: sequence, to: statement)
            try statement.bind(documentID, at: 5)
        }
    }

    private static func delete(_ grant: DocumentGrant, at sequence: UInt64, _ connection: Connection) throws {
        try connection.execute(
            "DELETE FROM grants WHERE principal = ? AND kind = ? AND sequence = ? AND target = ?"
        ) { statement in try bindKey(of: grant, at: sequence, to: statement) }
    }

    /// Binds a row's key, (principal, kind, sequence, target), to parameters 1–4.
    private static func bindKey(of grant: DocumentGrant, at sequence: UInt64, to statement: Statement) throws {
        try statement.bind(grant.principal, at: 1)
        try statement.bind(Int64(grant.kind.rawValue), at: 2)
        try statement.bind(Int64(sequence), at: 3)
        try statement.bind(grant.target, at: 4)
    }
}
