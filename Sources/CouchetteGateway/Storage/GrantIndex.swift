import CouchetteCore
import CouchetteSQLite

// MARK: - GrantIndex

/// The `grants` table of ``SQLiteGatewayStorage``: every channel and role grant made by a document's current
/// revision, by principal, with the sequence of the change that first made it (spec: sync-function.md §7.2).
///
/// A user's or role's granted channels and roles are read from here when it is loaded, so they are never
/// stale; the sequences drive `_changes` backfill. A grant that a new winning revision repeats keeps its
/// sequence; one it drops is deleted (revocation).
enum GrantIndex {
    /// `kind` of a channel grant (`access()`).
    static let channelGrant = 0
    /// `kind` of a role grant (`role()`).
    static let roleGrant = 1

    /// Creates the table (schema version 2) and indexes the grants of documents stored before it existed.
    static func migrate(_ connection: Connection) throws {
        try connection.transaction { connection in
            try connection.execute(
                """
                CREATE TABLE grants (
                    doc_id TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    principal TEXT NOT NULL,
                    target TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    PRIMARY KEY (doc_id, kind, principal, target)
                ) WITHOUT ROWID;
                CREATE INDEX grants_by_principal ON grants (principal, kind);
                """)
            var documents: [StoredDocument] = []
            try connection.forEachRow("SELECT id, sequence, body, metadata FROM documents") { row in
                documents.append(
                    try StoredDocumentCodec.decode(
                        id: row.string(at: 0), sequence: UInt64(row.int64(at: 1)), winnerBody: row.blob(at: 2),
                        metadata: row.blob(at: 3)))
            }
            for document in documents { try update(of: document, connection) }
            try connection.setUserVersion(2)
        }
    }

    /// Replaces the rows of `document` by the grants of its current revision, keeping the sequences of grants it
    /// already made.
    ///
    /// - Parameter isNew: The document had no stored revision before (it has no rows yet: a purge removes them).
    static func update(of document: StoredDocument, isNew: Bool = false, _ connection: Connection) throws {
        var existing: [String: Int64] = [:]
        if !isNew {
            try connection.forEachRow(
                "SELECT kind, principal, target, sequence FROM grants WHERE doc_id = ?", document.id
            ) { row in
                existing["\(row.int64(at: 0))\u{1F}\(row.string(at: 1))\u{1F}\(row.string(at: 2))"] = row.int64(at: 3)
            }
        }
        let wanted = rows(of: document)
        if existing.isEmpty && wanted.isEmpty { return }
        if !existing.isEmpty { try connection.execute("DELETE FROM grants WHERE doc_id = ?", document.id) }
        for (kind, principal, target) in wanted {
            let sequence = existing["\(kind)\u{1F}\(principal)\u{1F}\(target)"] ?? Int64(document.sequence)
            try connection.execute(
                "INSERT INTO grants (doc_id, kind, principal, target, sequence) VALUES (?, ?, ?, ?, ?)",
                document.id, Int64(kind), principal, target, sequence)
        }
    }

    /// The grants of a document's current revision as rows `(kind, principal, target)`.
    private static func rows(of document: StoredDocument) -> [(Int, String, String)] {
        var rows: [(Int, String, String)] = []
        for (principal, channels) in document.access {
            for channel in channels { rows.append((channelGrant, principal, channel)) }
        }
        for (user, roles) in document.roleAccess {
            for role in roles { rows.append((roleGrant, user, role)) }
        }
        return rows
    }

    /// The targets granted to `principal` with their earliest sequence.
    static func grants(kind: Int, to principal: String, _ connection: Connection) throws -> [String: UInt64] {
        var grants: [String: UInt64] = [:]
        try connection.forEachRow(
            "SELECT target, min(sequence) FROM grants WHERE principal = ? AND kind = ? GROUP BY target", principal,
            Int64(kind)
        ) { row in
            grants[row.string(at: 0)] = UInt64(row.int64(at: 1))
        }
        return grants
    }
}
