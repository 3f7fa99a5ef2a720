import CouchetteSQLite
import Foundation

/// Users, roles and sessions in the database's SQLite file, as JSON of their stored (`Codable`) forms.
extension SQLiteGatewayStorage: PrincipalStore {
    private func load<T: Decodable>(_ type: T.Type, from table: String, key: String, value: String) throws(GatewayError) -> T? {
        let data: [UInt8]? = try withConnection { connection in
            try connection.firstValue("SELECT data FROM \(table) WHERE \(key) = ?", value)?.blobValue
        }
        guard let data else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(data))
        } catch {
            throw .internalError("A stored \(table.dropLast()) is corrupt")
        }
    }

    private func encode(_ value: some Encodable) throws(GatewayError) -> [UInt8] {
        do { return Array(try JSONEncoder().encode(value)) } catch {
            throw .internalError("Cannot encode a principal: \(error)")
        }
    }

    /// Stores a user or role (a `name, data` table), replacing the one of that name.
    private func store(_ principal: some Encodable, named name: String, in table: String) throws(GatewayError) {
        let data = try encode(principal)
        try withConnection { connection in
            try connection.execute("INSERT OR REPLACE INTO \(table) (name, data) VALUES (?, ?)", name, data)
        }
    }

    private func names(in table: String) throws(GatewayError) -> [String] {
        try withConnection { connection in
            try connection.query("SELECT name FROM \(table) ORDER BY name").compactMap { $0[0].stringValue }
        }
    }

    private func delete(from table: String, key: String, value: String) throws(GatewayError) -> Bool {
        try withConnection { connection in
            try connection.execute("DELETE FROM \(table) WHERE \(key) = ?", value)
            return try connection.changes > 0
        }
    }

    // MARK: - Users

    public func user(named name: String) throws(GatewayError) -> User? {
        lock.lock()
        defer { lock.unlock() }
        if let cached = principalCache.user(named: name) { return cached }
        guard let stored = try load(User.self, from: "users", key: "name", value: name) else { return nil }
        let user = try withDocumentGrants(stored)
        principalCache.store(user)
        return user
    }

    public func channelGrantSequences(of user: User) throws(GatewayError) -> [String: UInt64] {
        lock.lock()
        defer { lock.unlock() }
        if let cached = principalCache.grantSequences(of: user) { return cached }
        let sequences = try computeChannelGrantSequences(of: user)  // reads roles and grants under the same lock
        principalCache.store(grantSequences: sequences, of: user)
        return sequences
    }

    public func allChannels(of user: User) throws(GatewayError) -> Set<String> {
        lock.lock()
        defer { lock.unlock() }
        if let cached = principalCache.channels(of: user) { return cached }
        let channels = user.allChannels(roles: try roles(of: user))
        principalCache.store(channels, of: user)
        return channels
    }

    // MARK: - Grants made by documents

    public func documentChannelGrants(to principal: String) throws(GatewayError) -> [String: UInt64] {
        try withConnection { connection in
            try memoryIndex?.grants.grants(kind: .channel, to: principal)
                ?? GrantIndex.grants(kind: .channel, to: principal, connection)
        }
    }

    public func documentGrantSources(to principal: String) throws(GatewayError) -> [DocumentGrantSource] {
        try withConnection { connection in
            try memoryIndex?.grants.sources(to: principal) ?? GrantIndex.sources(to: principal, connection)
        }
    }

    public func documentRoleGrants(to name: String) throws(GatewayError) -> [String: UInt64] {
        try withConnection { connection in
            try memoryIndex?.grants.grants(kind: .role, to: name)
                ?? GrantIndex.grants(kind: .role, to: name, connection)
        }
    }

    public func noteServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64)
        throws(GatewayError) -> [String: RevokedChannel]
    {
        // Writes follow what changed (channels gained or lost) plus one row per call: a user with many channels
        // does not rewrite them all at every feed.
        try withConnection { connection in
            try connection.transaction { connection in
                let lastServed = try connection.firstValue(
                    "SELECT last_served FROM served_users WHERE user = ?", user)?.int64Value.map { UInt64($0) } ?? 0
                var served: Set<String> = []
                var revoked: [String: RevokedChannel] = [:]
                try connection.forEachRow(
                    "SELECT channel, served_through, revoked FROM served_channels WHERE user = ?", user
                ) { row in
                    let channel = row.string(at: 0)
                    if row.isNull(at: 2) {
                        served.insert(channel)
                    } else if !channels.contains(channel) {
                        revoked[channel] = RevokedChannel(
                            revokedAt: UInt64(row.int64(at: 2)), servedThrough: UInt64(row.int64(at: 1)))
                    }
                }
                for channel in served.subtracting(channels) {
                    // Lost since the last feed, which served it through its own end.
                    try connection.execute(
                        "UPDATE served_channels SET revoked = ?, served_through = ? WHERE user = ? AND channel = ?",
                        Int64(sequence), Int64(lastServed), user, channel)
                    revoked[channel] = RevokedChannel(revokedAt: sequence, servedThrough: lastServed)
                }
                for channel in channels.subtracting(served) {
                    try connection.execute(
                        """
                        INSERT INTO served_channels (user, channel, served_through, revoked) VALUES (?, ?, NULL, NULL)
                        ON CONFLICT (user, channel) DO UPDATE SET served_through = NULL, revoked = NULL
                        """, user, channel)
                }
                try connection.execute(
                    """
                    INSERT INTO served_users (user, last_served) VALUES (?, ?)
                    ON CONFLICT (user) DO UPDATE SET last_served = excluded.last_served
                    """, user, Int64(sequence))
                return revoked
            }
        }
    }

    public func putUser(_ user: User) throws(GatewayError) {
        lock.lock()
        defer { lock.unlock() }
        principalCache.invalidate(user.name)
        try store(user, named: user.name, in: "users")
    }

    @discardableResult
    public func deleteUser(named name: String) throws(GatewayError) -> Bool {
        // A user made later under the name starts with no served channels (nothing to revoke).
        lock.lock()
        defer { lock.unlock() }
        principalCache.invalidate(name)
        _ = try delete(from: "served_channels", key: "user", value: name)
        _ = try delete(from: "served_users", key: "user", value: name)
        return try delete(from: "users", key: "name", value: name)
    }

    public func userNames() throws(GatewayError) -> [String] { try names(in: "users") }

    // MARK: - Roles

    public func role(named name: String) throws(GatewayError) -> Role? {
        lock.lock()
        defer { lock.unlock() }
        if let cached = principalCache.role(named: name) { return cached }
        guard let stored = try load(Role.self, from: "roles", key: "name", value: name) else { return nil }
        let role = try withDocumentGrants(stored)
        principalCache.store(role)
        return role
    }

    public func putRole(_ role: Role) throws(GatewayError) {
        lock.lock()
        defer { lock.unlock() }
        principalCache.invalidate(PrincipalCache.rolePrincipal(role.name))
        try store(role, named: role.name, in: "roles")
    }

    @discardableResult
    public func deleteRole(named name: String) throws(GatewayError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        principalCache.invalidate(PrincipalCache.rolePrincipal(name))
        return try delete(from: "roles", key: "name", value: name)
    }

    public func roleNames() throws(GatewayError) -> [String] { try names(in: "roles") }

    // MARK: - Sessions

    public func session(id: String) throws(GatewayError) -> Session? {
        try load(Session.self, from: "sessions", key: "id", value: id)
    }

    public func putSession(_ session: Session) throws(GatewayError) {
        let data = try encode(session)
        try withConnection { connection in
            try connection.execute(
                "INSERT OR REPLACE INTO sessions (id, user, data) VALUES (?, ?, ?)", session.id, session.username, data)
        }
    }

    @discardableResult
    public func deleteSession(id: String) throws(GatewayError) -> Bool {
        try delete(from: "sessions", key: "id", value: id)
    }

    public func sessions(forUser username: String) throws(GatewayError) -> [Session] {
        let rows: [[UInt8]] = try withConnection { connection in
            try connection.query("SELECT data FROM sessions WHERE user = ? ORDER BY id", username)
                .compactMap { $0[0].blobValue }
        }
        var sessions: [Session] = []
        for row in rows {
            do { sessions.append(try JSONDecoder().decode(Session.self, from: Data(row))) } catch {
                throw .internalError("A stored session is corrupt")
            }
        }
        return sessions
    }
}
