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
