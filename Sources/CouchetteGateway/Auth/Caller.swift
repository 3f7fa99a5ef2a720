// MARK: - Caller

/// Who is making a request to a database: the admin listener, a user (possibly `GUEST`), or nobody.
///
/// Reads are filtered by ``canSee(_:)``: the admin sees everything, a user the documents in one of their
/// channels (spec: gateway-rest-api.md §1.1, sync-function.md §7).
public enum Caller: Sendable, Equatable {
    /// A request on the admin listener: full privileges, no read filtering.
    case admin
    /// An authenticated user, or `GUEST` when enabled, with every channel they can read.
    case user(User, channels: Set<String>)
    /// An unauthenticated request while `GUEST` is disabled (only login endpoints accept it).
    case anonymous

    /// The user, if any.
    public var user: User? {
        if case .user(let user, _) = self { return user }
        return nil
    }

    /// Whether the caller is the admin.
    public var isAdmin: Bool { self == .admin }

    /// The channels the caller can read; `nil` for all (the admin, or a user granted `*`).
    public var readableChannels: Set<String>? {
        switch self {
        case .admin: nil
        case .user(_, let channels): channels.contains(PrincipalName.allChannels) ? nil : channels
        case .anonymous: []
        }
    }

    /// Whether the caller may read a revision in `channels`.
    public func canSee(_ channels: Set<String>) -> Bool {
        guard let readable = readableChannels else { return true }
        return !readable.isDisjoint(with: channels)
    }
}

// MARK: - Sync function context

extension Caller {
    /// The user context the sync function sees: nil for the admin (every `require*` passes); `GUEST` is named `""`.
    public var syncContext: SyncUserContext? {
        switch self {
        case .admin: nil
        case .user(let user, let channels):
            SyncUserContext(name: user.isGuest ? "" : user.name, roles: user.roleNames, channels: channels)
        case .anonymous: SyncUserContext(name: "", roles: [], channels: [])
        }
    }
}
