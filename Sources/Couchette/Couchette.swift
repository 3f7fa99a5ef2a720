@_exported import CouchetteCore

/// Couchette: an embedded JSON document database with revision trees, attachments, queries, encryption at
/// rest and a replicator that speaks the CouchDB replication protocol.
///
/// `import Couchette` also brings in the shared value types of `CouchetteCore`: ``JSONValue``,
/// ``RevisionID``, ``RevisionTree``, ``RevisionHistory`` and ``AttachmentMetadata``.
public enum Couchette {
    /// The library's version.
    public static let version = "0.1.0"
}
