import CouchetteCore

// MARK: - SyncImpact

/// What deploying a new sync function would change for stored documents, found by running both functions over them
/// (`POST /{db}/_sync_impact`, the Admin UI's "Impact before deploy"): which documents change channels or grants or
/// become refused, and which principals gain or lose channels and roles through document grants.
///
/// ```swift
/// var impact = SyncImpact()
/// impact.add(id: "a", deployed: .success(RoutingResult(channels: ["x"])), edited: .success(RoutingResult(channels: ["y"])))
/// impact.json  // {"documents":1,"changed":1,"changes":[{"id":"a","channels":{"added":["y"],"removed":["x"]}}],…}
/// ```
///
/// Gains and losses count grants documents make (the admin's own grants are not documents' and do not change).
public struct SyncImpact: Sendable {
    /// How many documents were compared.
    public private(set) var documentCount = 0
    /// How many of them change (channels, grants, roles, or acceptance).
    public private(set) var changedCount = 0
    /// The first ``changeLimit`` changed documents, described.
    public private(set) var changes: [JSONValue] = []
    /// How many documents the edited function refuses while the deployed one accepts them, and the reverse.
    public private(set) var newlyRefused = 0
    public private(set) var noLongerRefused = 0

    /// The most changed documents described one by one.
    public static let changeLimit = 100

    private var deployedGrants: Set<DocumentGrant> = []
    private var editedGrants: Set<DocumentGrant> = []

    /// An empty comparison.
    public init() {}

    /// Adds one document's outcomes under the deployed and the edited function.
    public mutating func add(
        id: String, deployed: Result<RoutingResult, GatewayError>, edited: Result<RoutingResult, GatewayError>
    ) {
        documentCount += 1
        let before = try? deployed.get()
        let after = try? edited.get()
        if let before { Self.collect(before, into: &deployedGrants) }
        if let after { Self.collect(after, into: &editedGrants) }
        var change: [String: JSONValue] = [:]
        switch (before, after) {
        case (.some, .none):
            newlyRefused += 1
            change["refused"] = .string(Self.reason(edited))
        case (.none, .some):
            noLongerRefused += 1
            change["accepted"] = .string(Self.reason(deployed))
        case (.some(let before), .some(let after)):
            if let channels = Self.difference(before.channels, after.channels) { change["channels"] = channels }
            if let access = Self.differences(before.access, after.access) { change["access"] = access }
            if let roles = Self.differences(before.roles, after.roles) { change["roles"] = roles }
        case (.none, .none):
            break
        }
        guard !change.isEmpty else { return }
        changedCount += 1
        if changes.count < Self.changeLimit {
            change["id"] = .string(id)
            changes.append(.object(change))
        }
    }

    /// `{"documents", "changed", "refused", "accepted", "changes": [{"id", "channels"?: {"added","removed"},
    /// "access"?: {principal: {"added","removed"}}, "roles"?: {…}, "refused"?: reason, "accepted"?: reason}],
    /// "principals": {principal: {"gains": […], "loses": […]}}}` — roles under `"role:NAME"` entries of a user's
    /// gains and losses.
    public var json: JSONValue {
        var principals: [String: (gains: Set<String>, loses: Set<String>)] = [:]
        for grant in editedGrants.subtracting(deployedGrants) { principals[grant.principal, default: ([], [])].gains.insert(Self.name(grant)) }
        for grant in deployedGrants.subtracting(editedGrants) { principals[grant.principal, default: ([], [])].loses.insert(Self.name(grant)) }
        return [
            "documents": .int(Int64(documentCount)), "changed": .int(Int64(changedCount)),
            "refused": .int(Int64(newlyRefused)), "accepted": .int(Int64(noLongerRefused)),
            "changes": .array(changes),
            "principals": .object(principals.mapValues { entry in
                ["gains": Self.sorted(entry.gains), "loses": Self.sorted(entry.loses)]
            }),
        ]
    }

    // MARK: - Helpers

    private static func collect(_ result: RoutingResult, into grants: inout Set<DocumentGrant>) {
        for (principal, channels) in result.access {
            for channel in channels { grants.insert(DocumentGrant(kind: .channel, principal: principal, target: channel)) }
        }
        for (user, roles) in result.roles {
            for role in roles { grants.insert(DocumentGrant(kind: .role, principal: user, target: role)) }
        }
    }

    private static func name(_ grant: DocumentGrant) -> String {
        grant.kind == .role ? "role:" + grant.target : grant.target
    }

    private static func reason(_ result: Result<RoutingResult, GatewayError>) -> String {
        if case .failure(let error) = result { return "\(error.statusCode) \(error.reason)" }
        return ""
    }

    private static func sorted(_ names: Set<String>) -> JSONValue {
        .array(names.sorted().map(JSONValue.string))
    }

    private static func difference(_ before: Set<String>, _ after: Set<String>) -> JSONValue? {
        guard before != after else { return nil }
        return ["added": sorted(after.subtracting(before)), "removed": sorted(before.subtracting(after))]
    }

    private static func differences(_ before: [String: Set<String>], _ after: [String: Set<String>]) -> JSONValue? {
        var entries: [String: JSONValue] = [:]
        for principal in Set(before.keys).union(after.keys) {
            if let change = difference(before[principal] ?? [], after[principal] ?? []) { entries[principal] = change }
        }
        return entries.isEmpty ? nil : .object(entries)
    }
}
