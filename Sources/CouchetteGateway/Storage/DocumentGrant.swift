// MARK: - DocumentGrant

/// One grant a document's current revision makes through the sync function: a channel to a user or a role
/// (`access()`), or a role to a user (`role()`) (spec: sync-function.md §3).
///
/// ```swift
/// DocumentGrant(kind: .channel, principal: "user1", target: "task-list.user1.groceries")
/// DocumentGrant(kind: .channel, principal: "role:moderator", target: "task-list.user1.groceries")
/// DocumentGrant(kind: .role, principal: "user1", target: "moderator")
/// ```
public struct DocumentGrant: Sendable, Hashable {
    /// What is granted.
    public enum Kind: Int, Sendable, Hashable {
        /// A channel, to a user or to `role:NAME`.
        case channel = 0
        /// A role, to a user.
        case role = 1
    }

    /// What is granted.
    public var kind: Kind
    /// Who receives it: a user name, or `role:NAME` for a channel granted to a role.
    public var principal: String
    /// The channel or role granted.
    public var target: String

    /// Creates a grant.
    public init(kind: Kind, principal: String, target: String) {
        self.kind = kind
        self.principal = principal
        self.target = target
    }
}

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
