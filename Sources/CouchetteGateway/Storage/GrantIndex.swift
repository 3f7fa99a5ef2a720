import CouchetteCore
import CouchetteSQLite

// MARK: - GrantIndex

/// The `grants` table of ``SQLiteGatewayStorage``: every grant the current revisions of documents make (the rows
/// ``IndexChanges`` works out), keyed by principal, kind and the sequence of the change that first made it.
///
/// A user's or role's granted channels and roles are read from here when it is loaded, so they are never stale;
/// the sequences drive `_changes` backfill. Rows are keyed by principal then sequence, so a write appends to each
/// principal's rows instead of inserting at random places.
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

    /// Writes a transaction's grant rows, one statement each (for the reason ``ChannelIndex/write(_:_:)`` gives).
    static func write(_ rows: PendingIndexRows, _ connection: Connection) throws {
        for key in rows.deletedGrants { try delete(key.grant, at: key.sequence, connection) }
        let statement = try connection.cachedStatement(
            sql: "INSERT INTO grants (principal, kind, sequence, target, doc_id) VALUES (?, ?, ?, ?, ?)")
        for row in rows.insertedGrants.values {
            try statement.bind(row.grant.principal, at: 1)
            try statement.bind(Int64(row.grant.kind.rawValue), at: 2)
            try statement.bind(Int64(row.sequence), at: 3)
            try statement.bind(row.grant.target, at: 4)
            try statement.bind(row.documentID, at: 5)
            try statement.execute()
        }
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

    /// Every grant to `principal`, with the document making it, in sequence order.
    static func sources(to principal: String, _ connection: Connection) throws -> [DocumentGrantSource] {
        var sources: [DocumentGrantSource] = []
        try connection.forEachRow(
            "SELECT kind, target, sequence, doc_id FROM grants WHERE principal = ? ORDER BY sequence, kind, target",
            principal
        ) { row in
            let kind = DocumentGrant.Kind(rawValue: Int(row.int64(at: 0))) ?? .channel
            sources.append(
                DocumentGrantSource(
                    grant: DocumentGrant(kind: kind, principal: principal, target: row.string(at: 1)),
                    sequence: UInt64(row.int64(at: 2)), documentID: row.string(at: 3)))
        }
        return sources
    }

    // MARK: - Rows

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
