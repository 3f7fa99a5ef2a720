import CouchetteCore

// MARK: - Conflict

/// Two live revisions of one document after a pull: the local one and the one just pulled.
public struct Conflict: Sendable {
    /// The document's ID.
    public let documentID: String
    /// The local revision (nil when it is a deletion).
    public let localDocument: Document?
    /// The pulled revision (nil when it is a deletion).
    public let remoteDocument: Document?
}

/// Resolves conflicts as a replicator pulls them (Couchbase Lite 3 style).
///
/// Return `localDocument` or `remoteDocument` to keep that side, a new document (e.g. `local.toMutable()` with
/// merged properties) to save a merge, or nil to delete the document.
public protocol ConflictResolverProtocol: Sendable {
    /// The document to keep.
    func resolve(conflict: Conflict) -> Document?
}

// MARK: - ConflictResolver

/// The resolvers that come with the library.
///
/// ```swift
/// var lists = CollectionConfiguration(collection: try db.defaultCollection())
/// lists.conflictResolver = ConflictResolver.deletesWin
/// lists.conflictResolver = ConflictResolver.custom { conflict in
///     let merged = conflict.localDocument?.toMutable()
///     merged?.setString("Merged", forKey: "name")
///     return merged
/// }
/// ```
///
/// Without a resolver (``CollectionConfiguration/conflictResolver`` nil) conflicts are kept for the app, as in
/// Couchbase Lite 1.x and the tutorial.
public enum ConflictResolver {
    /// A deletion wins; otherwise the revision CouchDB's rules make the winner (higher generation, then higher
    /// revision ID) — the same choice on every device.
    public static var `default`: any ConflictResolverProtocol { DefaultResolver() }
    /// A deletion wins over any edit; between two edits, the default choice.
    public static var deletesWin: any ConflictResolverProtocol { DefaultResolver() }
    /// The pulled revision wins, deletion or not: the last device to sync decides.
    public static var lastWriteWins: any ConflictResolverProtocol { ClosureResolver { $0.remoteDocument } }
    /// Keeps both branches for the app to resolve (``Collection/conflictingRevisions(documentID:)``).
    public static var keepConflicts: any ConflictResolverProtocol { KeepConflicts() }

    /// A resolver from a closure.
    public static func custom(
        _ resolve: @escaping @Sendable (Conflict) -> Document?
    ) -> any ConflictResolverProtocol {
        ClosureResolver(body: resolve)
    }

    // MARK: - Implementations

    struct DefaultResolver: ConflictResolverProtocol {
        func resolve(conflict: Conflict) -> Document? {
            guard let local = conflict.localDocument, let remote = conflict.remoteDocument else { return nil }
            let localID = local.revisionID.flatMap { try? RevisionID(parsing: $0) }
            let remoteID = remote.revisionID.flatMap { try? RevisionID(parsing: $0) }
            guard let localID, let remoteID else { return remote }
            return localID < remoteID ? remote : local
        }
    }

    struct ClosureResolver: ConflictResolverProtocol {
        let body: @Sendable (Conflict) -> Document?
        func resolve(conflict: Conflict) -> Document? { body(conflict) }
    }

    struct KeepConflicts: ConflictResolverProtocol {
        func resolve(conflict: Conflict) -> Document? { conflict.localDocument }
    }
}
