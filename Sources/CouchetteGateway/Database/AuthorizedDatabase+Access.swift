import CouchetteCore

// MARK: - Access explainer (admin)

extension AuthorizedDatabase {
    /// Why user `name` can read what they can (`GET /{db}/_access?user=NAME&doc=ID`, the Admin UI's access explainer):
    /// each channel with every way it is held — `public` (`!`), `admin` (`admin_channels`), `document` (a document's
    /// `access()`, with the document and the grant's sequence) or `role` (held through a role, which has it by
    /// `admin` or `document`) — each role with how it is held, and for a document whether the user can read it
    /// (through which channels) and write it (the deployed sync function run as the user on an update of its current
    /// revision).
    ///
    /// - Throws: 404 `missing user NAME`.
    public func explainAccess(userName name: String, documentID: String?) throws(GatewayError) -> JSONValue {
        try requireAdmin()
        let storage = database.storage
        guard let user = try database.principals.user(named: name) else { throw .notFound("missing user \(name)") }
        var channels: [String: [JSONValue]] = [PrincipalName.publicChannel: [["via": "public"]]]
        var roles: [String: [JSONValue]] = [:]
        for channel in user.adminChannels { channels[channel, default: []].append(["via": "admin"]) }
        for role in user.adminRoles { roles[role, default: []].append(["via": "admin"]) }
        for source in try storage.documentGrantSources(to: user.name) {
            let origin = Self.origin(source)
            switch source.grant.kind {
            case .channel: channels[source.grant.target, default: []].append(origin)
            case .role: roles[source.grant.target, default: []].append(origin)
            }
        }
        for roleName in user.roleNames.sorted() {
            guard let role = try storage.role(named: roleName) else { continue }
            for channel in role.adminChannels {
                channels[channel, default: []].append(["via": "role", "role": .string(roleName), "how": "admin"])
            }
            for source in try storage.documentGrantSources(to: "role:" + roleName) where source.grant.kind == .channel {
                var origin = Self.origin(source).objectValue ?? [:]
                origin["via"] = "role"
                origin["role"] = .string(roleName)
                origin["how"] = "document"
                channels[source.grant.target, default: []].append(.object(origin))
            }
        }
        let all = try storage.allChannels(of: user)
        var result: [String: JSONValue] = [
            "user": .string(user.name), "disabled": .bool(user.disabled),
            "all_channels": .array(all.sorted().map(JSONValue.string)),
            "channels": .object(channels.mapValues(JSONValue.array)),
            "roles": .object(roles.mapValues(JSONValue.array)),
        ]
        if let documentID { result["document"] = try explainDocument(documentID, for: user, channels: all) }
        return .object(result)
    }

    /// The users and roles that can read `channel` (`GET /{db}/_access?channel=NAME`): those holding it or `*`,
    /// directly or through a role.
    public func channelReaders(_ channel: String) throws(GatewayError) -> JSONValue {
        try requireAdmin()
        let storage = database.storage
        var users: [String] = []
        for name in try storage.userNames() {
            guard let user = try storage.user(named: name), !user.disabled else { continue }
            let all = try storage.allChannels(of: user)
            if all.contains(channel) || all.contains(PrincipalName.allChannels) { users.append(name) }
        }
        var roles: [String] = []
        for name in try storage.roleNames() {
            guard let role = try storage.role(named: name) else { continue }
            if role.allChannels.contains(channel) || role.allChannels.contains(PrincipalName.allChannels) { roles.append(name) }
        }
        return [
            "channel": .string(channel), "users": .array(users.sorted().map(JSONValue.string)),
            "roles": .array(roles.sorted().map(JSONValue.string)),
        ]
    }

    /// Whether `user` can read the document (through which of its channels) and write it.
    private func explainDocument(_ id: String, for user: User, channels: Set<String>) throws(GatewayError) -> JSONValue {
        guard let stored = try database.storage.document(id: id), let winner = stored.winner else {
            return ["id": .string(id), "exists": false]
        }
        let visibility = stored.currentVisibilityChannels
        let caller = Caller.user(user, channels: channels)
        let through = channels.contains(PrincipalName.allChannels) ? [PrincipalName.allChannels] : visibility.intersection(channels).sorted()
        var result: [String: JSONValue] = [
            "id": .string(id), "exists": true, "deleted": .bool(winner.isDeleted),
            "channels": .array(visibility.sorted().map(JSONValue.string)),
            "can_read": .bool(caller.canSee(visibility)), "read_through": .array(through.map(JSONValue.string)),
        ]
        // Writing: an update of the current revision by the user, as the deployed sync function sees it.
        var body = winner.body?.objectValue ?? [:]
        body["_id"] = .string(id)
        let old: JSONValue = winner.isDeleted ? ["_id": .string(id), "_deleted": true] : .object(body)
        do {
            _ = try database.router.route(document: .object(body), oldDocument: old, user: caller.syncContext)
            result["can_write"] = true
        } catch {
            result["can_write"] = false
            result["write_refused"] = .string("\(error.statusCode) \(error.reason)")
        }
        return .object(result)
    }

    private static func origin(_ source: DocumentGrantSource) -> JSONValue {
        ["via": "document", "doc": .string(source.documentID), "seq": .int(Int64(source.sequence))]
    }

    /// Every channel a document is in now, with how many documents are (`GET /{db}/_channels`):
    /// `{"channels": [{"name", "documents"}]}` in channel order.
    public func channels() throws(GatewayError) -> JSONValue {
        try requireAdmin()
        let counts = try database.storage.channelCounts()
        return ["channels": .array(counts.map { ["name": .string($0.channel), "documents": .int(Int64($0.documents))] })]
    }
}
