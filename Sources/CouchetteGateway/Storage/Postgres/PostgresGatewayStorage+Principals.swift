import Foundation
import NIOCore
import PostgresNIO

/// Users, roles and sessions in PostgreSQL, as JSON of their stored (`Codable`) forms, read at every call so that a
/// change made on one node is what every node sees next.
///
/// A user is read with the channels and roles documents granted it in one statement, and a user's roles with
/// theirs in another: a request's caller costs two round trips, and its `async` reads (``fetchUser(named:)``,
/// ``fetchAllChannels(of:)``, ``fetchSession(id:)``) hold no thread while PostgreSQL answers.
extension PostgresGatewayStorage: PrincipalStore {
    private func load<T: Decodable>(_ type: T.Type, _ query: PostgresQuery, what: String) throws(GatewayError) -> T? {
        let rows = try withConnection { link throws(GatewayError) in try link.query(query) }
        return try Self.decodeFirst(type, rows, what: what)
    }

    /// The stored form in the first row's first column, if any.
    private static func decodeFirst<T: Decodable>(
        _ type: T.Type, _ result: PostgresQueryResult, what: String
    ) throws(GatewayError) -> T? {
        guard let row = result.rows.first else { return nil }
        return try decodeStored(type, try PostgresLink.decode(row, as: ByteBuffer.self), what: what)
    }

    private static func decodeStored<T: Decodable>(_ type: T.Type, _ data: ByteBuffer, what: String)
        throws(GatewayError) -> T
    {
        do { return try JSONDecoder().decode(type, from: Data(data.readableBytesView)) } catch {
            throw .internalError("A stored \(what) is corrupt")
        }
    }

    private func encode(_ value: some Encodable) throws(GatewayError) -> ByteBuffer {
        do { return ByteBuffer(bytes: try JSONEncoder().encode(value)) } catch {
            throw .internalError("Cannot encode a principal: \(error)")
        }
    }

    private func names(_ query: PostgresQuery) throws(GatewayError) -> [String] {
        try withConnection { link throws(GatewayError) in try link.strings(query) }
    }

    /// Stores a user or role (a `name, data` table), replacing the one of that name.
    private func store(_ principal: some Encodable, named name: String, in table: String) throws(GatewayError) {
        let data = try encode(principal)
        try withConnection { link throws(GatewayError) in
            try link.query(
                """
                INSERT INTO \(unescaped: table) (name, data) VALUES (\(name), \(data))
                ON CONFLICT (name) DO UPDATE SET data = excluded.data
                """)
        }
    }

    private func changed(_ query: PostgresQuery) throws(GatewayError) -> Bool {
        try withConnection { link throws(GatewayError) in try link.rowsChanged(by: query) > 0 }
    }

    // MARK: - Users

    public func user(named name: String) throws(GatewayError) -> User? {
        try Self.decodeUser(try withConnection { link throws(GatewayError) in try link.query(Self.userQuery(name)) })
    }

    /// ``user(named:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchUser(named name: String) async throws(GatewayError) -> User? {
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeUser(try await link.query(Self.userQuery(name)))
        }
    }

    /// A user with the channels and roles documents granted it (``withDocumentGrants(_:)-(User)``), in one statement.
    private static func userQuery(_ name: String) -> PostgresQuery {
        """
        SELECT u.data,
            ARRAY(SELECT DISTINCT target FROM grants WHERE principal = u.name AND kind = \(Int16(DocumentGrant.Kind.channel.rawValue))),
            ARRAY(SELECT DISTINCT target FROM grants WHERE principal = u.name AND kind = \(Int16(DocumentGrant.Kind.role.rawValue)))
        FROM users u WHERE u.name = \(name)
        """
    }

    private static func decodeUser(_ result: PostgresQueryResult) throws(GatewayError) -> User? {
        guard let row = result.rows.first else { return nil }
        let (data, channels, roles) = try PostgresLink.decode(row, as: (ByteBuffer, [String], [String]).self)
        var user = try decodeStored(User.self, data, what: "user")
        user.channelsFromGrants = Set(channels)
        user.rolesFromGrants = Set(roles)
        return user
    }

    public func putUser(_ user: User) throws(GatewayError) { try store(user, named: user.name, in: "users") }

    @discardableResult
    public func deleteUser(named name: String) throws(GatewayError) -> Bool {
        // A user made later under the name starts with no served channels (nothing to revoke).
        try inTransaction { link throws(GatewayError) in
            try link.query("DELETE FROM served_channels WHERE username = \(name)")
            try link.query("DELETE FROM served_users WHERE username = \(name)")
            return try link.rowsChanged(by: "DELETE FROM users WHERE name = \(name)") > 0
        }
    }

    public func userNames() throws(GatewayError) -> [String] { try names("SELECT name FROM users ORDER BY name") }

    // MARK: - Roles

    /// The role with the channels documents granted it, in the one statement a user's roles are read with.
    public func role(named name: String) throws(GatewayError) -> Role? {
        try Self.decodeRoles(try withConnection { link throws(GatewayError) in try link.query(Self.rolesQuery([name])) })
            .first
    }

    public func putRole(_ role: Role) throws(GatewayError) { try store(role, named: role.name, in: "roles") }

    @discardableResult
    public func deleteRole(named name: String) throws(GatewayError) -> Bool {
        try changed("DELETE FROM roles WHERE name = \(name)")
    }

    public func roleNames() throws(GatewayError) -> [String] { try names("SELECT name FROM roles ORDER BY name") }

    /// The channels `user` can read (``User/allChannels(roles:)``), its roles read with their granted channels in one
    /// statement.
    public func allChannels(of user: User) throws(GatewayError) -> Set<String> {
        let names = user.roleNames
        guard !names.isEmpty else { return user.allChannels(roles: []) }
        let rows = try withConnection { link throws(GatewayError) in try link.query(Self.rolesQuery(names)) }
        return user.allChannels(roles: try Self.decodeRoles(rows))
    }

    /// ``allChannels(of:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchAllChannels(of user: User) async throws(GatewayError) -> Set<String> {
        let names = user.roleNames
        guard !names.isEmpty else { return user.allChannels(roles: []) }
        return try await withConnection { link async throws(GatewayError) in
            user.allChannels(roles: try Self.decodeRoles(try await link.query(Self.rolesQuery(names))))
        }
    }

    /// Roles with the channels documents granted `role:NAME` (``withDocumentGrants(_:)-(Role)``), in one statement.
    private static func rolesQuery(_ names: Set<String>) -> PostgresQuery {
        """
        SELECT r.data,
            ARRAY(SELECT DISTINCT target FROM grants
                WHERE principal = \(PrincipalCache.rolePrefix) || r.name
                AND kind = \(Int16(DocumentGrant.Kind.channel.rawValue)))
        FROM roles r WHERE r.name = ANY(\(Array(names)))
        """
    }

    private static func decodeRoles(_ result: PostgresQueryResult) throws(GatewayError) -> [Role] {
        var roles: [Role] = []
        for row in result.rows {
            let (data, channels) = try PostgresLink.decode(row, as: (ByteBuffer, [String]).self)
            var role = try decodeStored(Role.self, data, what: "role")
            role.channelsFromGrants = Set(channels)
            roles.append(role)
        }
        return roles
    }

    // MARK: - Sessions

    public func session(id: String) throws(GatewayError) -> Session? {
        try load(Session.self, Self.sessionQuery(id), what: "session")
    }

    /// ``session(id:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchSession(id: String) async throws(GatewayError) -> Session? {
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeFirst(Session.self, try await link.query(Self.sessionQuery(id)), what: "session")
        }
    }

    private static func sessionQuery(_ id: String) -> PostgresQuery {
        "SELECT data FROM sessions WHERE id = \(id)"
    }

    public func putSession(_ session: Session) throws(GatewayError) {
        let data = try encode(session)
        try withConnection { link throws(GatewayError) in
            try link.query(
                """
                INSERT INTO sessions (id, username, data) VALUES (\(session.id), \(session.username), \(data))
                ON CONFLICT (id) DO UPDATE SET username = excluded.username, data = excluded.data
                """)
        }
    }

    @discardableResult
    public func deleteSession(id: String) throws(GatewayError) -> Bool {
        try changed("DELETE FROM sessions WHERE id = \(id)")
    }

    public func sessions(forUser username: String) throws(GatewayError) -> [Session] {
        let rows = try withConnection { link throws(GatewayError) in
            try link.query("SELECT data FROM sessions WHERE username = \(username) ORDER BY id").rows
        }
        var sessions: [Session] = []
        for row in rows {
            let data = try PostgresLink.decode(row, as: ByteBuffer.self)
            do { sessions.append(try JSONDecoder().decode(Session.self, from: Data(data.readableBytesView))) } catch {
                throw .internalError("A stored session is corrupt")
            }
        }
        return sessions
    }

    // MARK: - Grants made by documents

    public func documentChannelGrants(to principal: String) throws(GatewayError) -> [String: UInt64] {
        try grants(kind: .channel, to: principal)
    }

    public func documentRoleGrants(to name: String) throws(GatewayError) -> [String: UInt64] {
        try grants(kind: .role, to: name)
    }

    public func documentGrantSources(to principal: String) throws(GatewayError) -> [DocumentGrantSource] {
        try withConnection { link throws(GatewayError) in
            let rows = try link.query(
                "SELECT kind, target, sequence, doc_id FROM grants WHERE principal = \(principal) ORDER BY sequence, kind, target")
            var sources: [DocumentGrantSource] = []
            for row in rows.rows {
                let (kind, target, sequence, documentID) = try PostgresLink.decode(
                    row, as: (Int16, String, Int64, String).self)
                sources.append(
                    DocumentGrantSource(
                        grant: DocumentGrant(kind: DocumentGrant.Kind(rawValue: Int(kind)) ?? .channel, principal: principal, target: target),
                        sequence: UInt64(sequence), documentID: documentID))
            }
            return sources
        }
    }

    private func grants(kind: DocumentGrant.Kind, to principal: String) throws(GatewayError) -> [String: UInt64] {
        try withConnection { link throws(GatewayError) in
            var grants: [String: UInt64] = [:]
            let rows = try link.query(
                """
                SELECT target, min(sequence) FROM grants WHERE principal = \(principal) AND kind = \(Int16(kind.rawValue))
                GROUP BY target
                """)
            for row in rows.rows {
                let (target, sequence) = try PostgresLink.decode(row, as: (String, Int64).self)
                grants[target] = UInt64(sequence)
            }
            return grants
        }
    }

    /// The grants behind ``channelGrantSequences(of:)`` in two statements: the user's, then its roles' with theirs.
    public func channelGrantSequences(of user: User) throws(GatewayError) -> [String: UInt64] {
        try withConnection { link throws(GatewayError) in
            var grants = try Self.decodeGrants(try link.query(Self.grantsQuery(to: user.name)))
            let names = grants.roleNames(of: user)
            if !names.isEmpty { try Self.addRoles(try link.query(Self.roleGrantsQuery(names)), to: &grants) }
            return grants.sequences(of: user)
        }
    }

    /// ``channelGrantSequences(of:)``, holding no thread while it waits for a connection or for PostgreSQL's
    /// answers.
    public func fetchChannelGrantSequences(of user: User) async throws(GatewayError) -> [String: UInt64] {
        return try await withConnection { link async throws(GatewayError) in
            var grants = try Self.decodeGrants(try await link.query(Self.grantsQuery(to: user.name)))
            let names = grants.roleNames(of: user)
            if !names.isEmpty { try Self.addRoles(try await link.query(Self.roleGrantsQuery(names)), to: &grants) }
            return grants.sequences(of: user)
        }
    }

    private static func grantsQuery(to principal: String) -> PostgresQuery {
        "SELECT kind, target, min(sequence) FROM grants WHERE principal = \(principal) GROUP BY kind, target"
    }

    private static func decodeGrants(_ result: PostgresQueryResult) throws(GatewayError) -> PrincipalGrants {
        var grants = PrincipalGrants(channels: [:], roles: [:])
        for row in result.rows {
            let (kind, target, sequence) = try PostgresLink.decode(row, as: (Int16, String, Int64).self)
            switch DocumentGrant.Kind(rawValue: Int(kind)) {
            case .role?: grants.roles[target] = UInt64(sequence)
            case .channel?: grants.channels[target] = UInt64(sequence)
            case nil: continue
            }
        }
        return grants
    }

    /// Roles with the channels documents granted them, each at its earliest grant (two arrays in target order).
    private static func roleGrantsQuery(_ names: Set<String>) -> PostgresQuery {
        """
        SELECT r.data,
            ARRAY(SELECT target FROM grants WHERE principal = \(PrincipalCache.rolePrefix) || r.name
                AND kind = \(Int16(DocumentGrant.Kind.channel.rawValue)) GROUP BY target ORDER BY target),
            ARRAY(SELECT min(sequence) FROM grants WHERE principal = \(PrincipalCache.rolePrefix) || r.name
                AND kind = \(Int16(DocumentGrant.Kind.channel.rawValue)) GROUP BY target ORDER BY target)
        FROM roles r WHERE r.name = ANY(\(Array(names)))
        """
    }

    private static func addRoles(_ result: PostgresQueryResult, to grants: inout PrincipalGrants) throws(GatewayError) {
        for row in result.rows {
            let (data, targets, sequences) = try PostgresLink.decode(row, as: (ByteBuffer, [String], [Int64]).self)
            let role = try decodeStored(Role.self, data, what: "role")
            grants.add(
                role: role,
                channels: Dictionary(zip(targets, sequences.map { UInt64($0) }), uniquingKeysWith: { min($0, $1) }))
        }
    }

    public func noteServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64)
        throws(GatewayError) -> [String: RevokedChannel]
    {
        // As SQLite's: writes follow what changed plus one row per call. The user's served_users row is locked first,
        // so two nodes' feeds of one user take turns.
        try inTransaction { link throws(GatewayError) in
            var served = ServedChannelsUpdate(user: user, channels: channels, at: sequence)
            try link.query(served.userRow)
            try served.locked(try link.query(served.lockUserRow))
            let writes = try served.read(try link.query(served.servedRows))
            for write in writes { try link.query(write) }
            return served.revoked
        }
    }

    /// ``noteServedChannels(_:of:at:)``, holding no thread while it waits for a connection or for PostgreSQL's
    /// answers.
    public func submitServedChannels(_ channels: Set<String>, of user: String, at sequence: UInt64)
        async throws(GatewayError) -> [String: RevokedChannel]
    {
        try await inTransaction { link async throws(GatewayError) in
            var served = ServedChannelsUpdate(user: user, channels: channels, at: sequence)
            try await link.query(served.userRow)
            try served.locked(try await link.query(served.lockUserRow))
            let writes = try served.read(try await link.query(served.servedRows))
            for write in writes { try await link.query(write) }
            return served.revoked
        }
    }
}

// MARK: - ServedChannelsUpdate

/// The statements of ``PostgresGatewayStorage/noteServedChannels(_:of:at:)`` and what they decide, for its
/// synchronous and `async` forms: the user's row (made if missing, then locked), the channels served so far, and
/// the writes for those lost and gained.
struct ServedChannelsUpdate {
    let user: String
    let channels: Set<String>
    let sequence: UInt64
    /// The last sequence served to the user, from the locked row.
    private(set) var lastServed: UInt64 = 0
    /// Every revoked channel the user does not read now, with its revocation.
    private(set) var revoked: [String: RevokedChannel] = [:]

    init(user: String, channels: Set<String>, at sequence: UInt64) {
        self.user = user
        self.channels = channels
        self.sequence = sequence
    }

    var userRow: PostgresQuery {
        "INSERT INTO served_users (username, last_served) VALUES (\(user), 0) ON CONFLICT DO NOTHING"
    }

    var lockUserRow: PostgresQuery {
        "SELECT last_served FROM served_users WHERE username = \(user) FOR UPDATE"
    }

    var servedRows: PostgresQuery {
        "SELECT channel, served_through, revoked FROM served_channels WHERE username = \(user)"
    }

    /// Takes the locked row's last served sequence.
    mutating func locked(_ result: PostgresQueryResult) throws(GatewayError) {
        lastServed = UInt64(
            try result.rows.first.map { row throws(GatewayError) in try PostgresLink.decode(row, as: Int64.self) } ?? 0)
    }

    /// Takes the channels served so far; returns the writes that record what the user reads now.
    mutating func read(_ result: PostgresQueryResult) throws(GatewayError) -> [PostgresQuery] {
        var served: Set<String> = []
        for row in result.rows {
            let (channel, servedThrough, revokedAt) = try PostgresLink.decode(row, as: (String, Int64?, Int64?).self)
            if let revokedAt {
                if !channels.contains(channel) {
                    revoked[channel] = RevokedChannel(revokedAt: UInt64(revokedAt), servedThrough: UInt64(servedThrough ?? 0))
                }
            } else {
                served.insert(channel)
            }
        }
        var writes: [PostgresQuery] = []
        let lost = Array(served.subtracting(channels))
        if !lost.isEmpty {
            // Lost since the last feed, which served them through its own end.
            writes.append(
                """
                UPDATE served_channels SET revoked = \(Int64(sequence)), served_through = \(Int64(lastServed))
                WHERE username = \(user) AND channel = ANY(\(lost))
                """)
            for channel in lost { revoked[channel] = RevokedChannel(revokedAt: sequence, servedThrough: lastServed) }
        }
        let gained = Array(channels.subtracting(served))
        if !gained.isEmpty {
            writes.append(
                """
                INSERT INTO served_channels (username, channel, served_through, revoked)
                SELECT \(user), channel, NULL, NULL FROM unnest(\(gained)::text[]) AS g(channel)
                ON CONFLICT (username, channel) DO UPDATE SET served_through = NULL, revoked = NULL
                """)
        }
        writes.append("UPDATE served_users SET last_served = \(Int64(sequence)) WHERE username = \(user)")
        return writes
    }
}
