import CouchetteCore

// MARK: - AccessModel

/// The access property's oracle: what each user may read, worked out from the history of admin calls and writes
/// alone, by sync-function.md §6–§7 and the revision-tree winner rule, sharing no code with the gateway.
///
/// Documents are routed as the property's sync function routes them: `channels` lists the revision's channels,
/// `grant` maps a user or `role:NAME` to the channels `access()` gives it (`*` dropped), `roles` maps a user to
/// the roles `role()` gives it. Only a document's winning revision grants anything; a tombstone grants nothing.
struct AccessModel {
    /// A user's admin grants.
    struct User: Equatable {
        var channels: Set<String>
        var roles: Set<String>
    }

    /// One revision of a document.
    struct Revision {
        var parent: String?
        var deleted: Bool
        var body: JSONValue
    }

    private(set) var users: [String: User] = [:]
    private(set) var roles: [String: Set<String>] = [:]
    /// Every revision of every document, by document ID and revision ID.
    private(set) var documents: [String: [String: Revision]] = [:]

    // MARK: - Changes

    mutating func saveUser(_ name: String, channels: Set<String>, roles: Set<String>) {
        users[name] = User(channels: channels, roles: roles)
    }

    mutating func deleteUser(_ name: String) { users[name] = nil }

    mutating func saveRole(_ name: String, channels: Set<String>) { roles[name] = channels }

    mutating func deleteRole(_ name: String) { roles[name] = nil }

    /// Records revision `id` of document `document`, a child of `parent` (nil for a root).
    mutating func add(_ id: String, of document: String, parent: String?, deleted: Bool, body: JSONValue) {
        documents[document, default: [:]][id] = Revision(parent: parent, deleted: deleted, body: body)
    }

    // MARK: - Revision trees

    /// The revisions of `document` that have no children.
    func leaves(of document: String) -> [String] {
        let revisions = documents[document] ?? [:]
        let parents = Set(revisions.values.compactMap(\.parent))
        return revisions.keys.filter { !parents.contains($0) }.sorted()
    }

    /// The winning revision: live leaves before tombstones, then the highest generation, then the greatest digest
    /// byte by byte (replication-protocol.md §2.4, §4).
    func winner(of document: String) -> String? {
        let revisions = documents[document] ?? [:]
        return leaves(of: document).max { left, right in
            let (l, r) = (revisions[left]!, revisions[right]!)
            if l.deleted != r.deleted { return l.deleted }
            let (lg, ld) = Self.split(left)
            let (rg, rd) = Self.split(right)
            if lg != rg { return lg < rg }
            return ld.utf8.lexicographicallyPrecedes(rd.utf8)
        }
    }

    /// The ancestry of `revision`, newest first, starting with it.
    func history(of revision: String, in document: String) -> [String] {
        var chain: [String] = []
        var next: String? = revision
        while let id = next {
            chain.append(id)
            next = documents[document]?[id]?.parent
        }
        return chain
    }

    static func split(_ revision: String) -> (generation: Int, digest: String) {
        let dash = revision.firstIndex(of: "-")!
        return (Int(revision[..<dash])!, String(revision[revision.index(after: dash)...]))
    }

    // MARK: - Access

    /// The live winning revisions' bodies, by document ID.
    private var liveWinners: [String: (revision: String, body: JSONValue)] {
        var winners: [String: (String, JSONValue)] = [:]
        for id in documents.keys {
            guard let winner = winner(of: id), let revision = documents[id]?[winner], !revision.deleted else {
                continue
            }
            winners[id] = (winner, revision.body)
        }
        return winners
    }

    /// The channels `grantee` (a user name or `role:NAME`) gets from documents' `access()` calls.
    private func documentGrants(to grantee: String, winners: [String: (revision: String, body: JSONValue)])
        -> Set<String>
    {
        var channels: Set<String> = []
        for (_, winner) in winners {
            channels.formUnion(Self.strings(winner.body["grant"]?[grantee]).subtracting(["*"]))
        }
        return channels
    }

    /// Every channel `user` can read (admin channels, documents' grants, its roles' channels, `!`), collapsed to
    /// `["*"]` when it holds `*`; nil when the user does not exist.
    func channels(of user: String) -> Set<String>? {
        guard let record = users[user] else { return nil }
        let winners = liveWinners
        var roleNames = record.roles
        for (_, winner) in winners { roleNames.formUnion(Self.strings(winner.body["roles"]?[user])) }
        var channels = record.channels.union(documentGrants(to: user, winners: winners))
        for role in roleNames {
            guard let roleChannels = roles[role] else { continue }  // deleted or never made
            channels.formUnion(roleChannels)
            channels.formUnion(documentGrants(to: "role:\(role)", winners: winners))
        }
        channels.insert("!")
        return channels.contains("*") ? ["*"] : channels
    }

    /// The documents `user` may `GET` and pull, with their winning revisions: live winners in one of the user's
    /// channels (any, for a holder of `*`); nothing for a user that does not exist.
    func readable(by user: String) -> [String: String] {
        guard let channels = channels(of: user) else { return [:] }
        var readable: [String: String] = [:]
        for (id, winner) in liveWinners {
            let documentChannels = Self.strings(winner.body["channels"])
            if channels.contains("*") || !documentChannels.isDisjoint(with: channels) { readable[id] = winner.revision }
        }
        return readable
    }

    private static func strings(_ value: JSONValue?) -> Set<String> {
        Set((value?.arrayValue ?? []).compactMap(\.stringValue))
    }
}
