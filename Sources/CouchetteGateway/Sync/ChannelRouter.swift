import CouchetteCore
import Foundation

// MARK: - RoutingResult

/// What the sync function decided for a revision: its channels, the access and roles it grants, and its expiry
/// (spec: sync-function.md §3).
public struct RoutingResult: Sendable, Hashable {
    /// The channels the revision goes to (`channel()`).
    public var channels: Set<String>
    /// Channels granted, by user name or `role:NAME` (`access()`).
    public var access: [String: Set<String>]
    /// Roles granted, by user name; role names without the `role:` prefix (`role()`).
    public var roles: [String: Set<String>]
    /// When the document expires (`expiry()`), if set.
    public var expiry: Date?

    /// Creates a result.
    public init(
        channels: Set<String> = [], access: [String: Set<String>] = [:], roles: [String: Set<String>] = [:],
        expiry: Date? = nil
    ) {
        self.channels = channels
        self.access = access
        self.roles = roles
        self.expiry = expiry
    }
}

extension RoutingResult {
    /// `{"channels":[…],"access":{principal:[…]},"roles":{user:[…]},"expiry"?:RFC 3339}`, names sorted: how the
    /// Admin UI's Live Preview shows a result.
    public var json: JSONValue {
        func sorted(_ names: Set<String>) -> JSONValue { .array(names.sorted().map(JSONValue.string)) }
        var members: [String: JSONValue] = [
            "channels": sorted(channels), "access": .object(access.mapValues(sorted)),
            "roles": .object(roles.mapValues(sorted)),
        ]
        if let expiry { members["expiry"] = .string(expiry.formatted(Date.ISO8601FormatStyle())) }
        return .object(members)
    }
}

// MARK: - SyncUserContext

/// The user a sync function runs for: what `requireUser`, `requireRole` and `requireAccess` check
/// (spec: sync-function.md §2 "Hidden context"). Requests on the admin port run with no context.
public struct SyncUserContext: Sendable, Hashable {
    /// The user's name; `""` for `GUEST`.
    public var name: String
    /// The user's roles (explicit and granted), bare names.
    public var roles: Set<String>
    /// Every channel the user can read, including `!` and role channels.
    public var channels: Set<String>

    /// Creates a context.
    public init(name: String, roles: Set<String>, channels: Set<String>) {
        self.name = name
        self.roles = roles
        self.channels = channels
    }
}

// MARK: - RoutingRequest

/// One revision to route: the sync function's `doc` and `oldDoc`.
public struct RoutingRequest: Sendable, Hashable {
    /// The new revision's body with `_id` and `_rev` (a deletion is `{"_id", "_deleted": true}`).
    public var document: JSONValue
    /// The parent revision's body with `_id`, nil when creating.
    public var oldDocument: JSONValue?

    /// Creates a request.
    public init(document: JSONValue, oldDocument: JSONValue?) {
        self.document = document
        self.oldDocument = oldDocument
    }
}

// MARK: - ChannelRouter

/// Decides where a new revision goes and what it grants: the sync function's job. ``PropertyChannelRouter`` is
/// the default (`function(doc){channel(doc.channels);}`); ``JavaScriptSyncFunction`` runs a configured one.
public protocol ChannelRouter: Sendable {
    /// Routes a revision, or throws to reject it: 403 `throw({forbidden})` and failed `require*`, 401
    /// `throw({unauthorized})`, 500 for exceptions and time-outs.
    ///
    /// - Parameters:
    ///   - document: The new revision's body with `_id` and `_rev` (a deletion is `{"_id", "_deleted": true}`).
    ///   - oldDocument: The parent revision's body with `_id`, nil when creating.
    ///   - user: The user writing, or nil on the admin port (every `require*` passes).
    func route(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) throws(GatewayError)
        -> RoutingResult

    /// Routes the revisions one user writes in one request (`_bulk_docs`), each as
    /// ``route(document:oldDocument:user:)`` would: the same results and errors, in order. The default routes them
    /// one by one; ``JavaScriptSyncFunction`` crosses into JavaScript once per batch.
    func route(batch: [RoutingRequest], user: SyncUserContext?) -> [Result<RoutingResult, GatewayError>]
}

extension ChannelRouter {
    public func route(batch: [RoutingRequest], user: SyncUserContext?) -> [Result<RoutingResult, GatewayError>] {
        batch.map { request in
            Result { () throws(GatewayError) in
                try route(document: request.document, oldDocument: request.oldDocument, user: user)
            }
        }
    }
}

// MARK: - PropertyChannelRouter

/// The default routing: the document's `channels` property, a string or an array of strings.
public struct PropertyChannelRouter: ChannelRouter {
    /// Creates the default router.
    public init() {}

    public func route(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) throws(GatewayError)
        -> RoutingResult
    {
        switch document["channels"] {
        case .string(let channel)?: RoutingResult(channels: [channel])
        case .array(let channels)?: RoutingResult(channels: Set(channels.compactMap(\.stringValue)))
        default: RoutingResult()
        }
    }
}
