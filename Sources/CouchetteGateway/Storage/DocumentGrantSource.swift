// MARK: - DocumentGrantSource

/// A grant a document makes, with the document and the sequence of the change that first made it: where a
/// principal's access comes from (the access explainer).
public struct DocumentGrantSource: Sendable, Hashable {
    /// What is granted, to whom.
    public var grant: DocumentGrant
    /// The sequence of the change that first made the grant.
    public var sequence: UInt64
    /// The document whose current revision makes it.
    public var documentID: String

    /// Creates a source.
    public init(grant: DocumentGrant, sequence: UInt64, documentID: String) {
        self.grant = grant
        self.sequence = sequence
        self.documentID = documentID
    }
}
