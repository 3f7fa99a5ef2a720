import CouchetteCore

/// What routing a revision decided: its channels and the access it grants.
public struct RoutingResult: Sendable, Hashable {
    /// The channels the revision goes to.
    public var channels: Set<String>
    /// Channels granted, by user (or `role:NAME`).
    public var access: [String: Set<String>]
    /// Roles granted, by user.
    public var roles: [String: Set<String>]

    public init(channels: Set<String> = [], access: [String: Set<String>] = [:], roles: [String: Set<String>] = [:]) {
        self.channels = channels
        self.access = access
        self.roles = roles
    }
}

/// Decides where a new revision goes: the sync function's job. ``PropertyChannelRouter`` is the default
/// (`function(doc){channel(doc.channels);}`); the JavaScript runtime replaces it.
public protocol ChannelRouter: Sendable {
    /// Routes a revision, or throws 403/401 to reject it.
    ///
    /// - Parameters:
    ///   - document: The new revision's body with `_id` (and `_deleted: true` for a deletion).
    ///   - oldDocument: The current revision's body, nil when creating.
    func route(document: JSONValue, oldDocument: JSONValue?) throws(GatewayError) -> RoutingResult
}

/// The default routing: the document's `channels` property, a string or an array of strings.
public struct PropertyChannelRouter: ChannelRouter {
    public init() {}

    public func route(document: JSONValue, oldDocument: JSONValue?) throws(GatewayError) -> RoutingResult {
        switch document["channels"] {
        case .string(let channel)?: RoutingResult(channels: [channel])
        case .array(let channels)?: RoutingResult(channels: Set(channels.compactMap(\.stringValue)))
        default: RoutingResult()
        }
    }
}
