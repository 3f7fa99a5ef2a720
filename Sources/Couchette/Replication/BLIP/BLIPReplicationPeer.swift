import CouchetteBLIP
import CouchetteCore
import Foundation

// MARK: - BLIPReplicationPeer

/// A remote database as a replication peer over BLIP (`ws://` / `wss://` ``URLEndpoint``s; spec:
/// blip-sync-protocol.md §3), as Couchbase Lite replicates with Sync Gateway. One WebSocket per peer, opened on first
/// use and again after it breaks.
///
/// The pass's pull-shaped questions map onto the protocol's server-driven flow:
/// - ``changes(since:limit:)`` subscribes once (`subChanges`, continuous when the replicator is) and returns each
///   `changes` message the server sends; ``revisions(_:of:)`` answers that message with the revisions wanted and their
///   known ancestors, then collects the `rev`s (or `norev`s) that follow.
/// - Pushes offer revisions with `changes` (answered like `_revs_diff`, so conflicting branches travel as they do over
///   the REST protocol) and send each as a `rev`; the server fetches or has the replicator prove the attachments it
///   lacks. A server that allows no conflicts (Sync Gateway since 2.x) refuses `changes` with 409, as LiteCore's
///   pusher expects: the peer then offers with `proposeChanges` and sends `rev`s with `noconflicts`, and a revision
///   that does not descend from the server's current one is that document's 409 (the pull brings the other side,
///   whose resolution is pushed next).
/// - Checkpoints are `getCheckpoint` / `setCheckpoint` (the server keeps them as `_local/checkpoint/{id}`).
///
/// Delta sync: the first `changes` reply says `deltas: true`; a `rev` with `deltaSrc` is applied to the local body of
/// that revision. When that base is missing the connection is dropped and the next one does without deltas.
actor BLIPReplicationPeer: ReplicationPeer {
    /// Two batches of `rev`s at once: the next batch's go out while the answers to the last travel back.
    nonisolated var concurrentStores: Int { 2 }

    nonisolated let identity: String
    /// `ws(s)://host/db/_blipsync`.
    private let endpoint: URL
    /// The database over HTTP, asked why an upgrade was refused.
    private let database: RemoteDatabaseClient
    private let headers: [String: String]
    private let channels: [String]?
    private let continuous: Bool
    private let trust: ServerTrust
    private let local: BLIPLocalContent

    /// The open connection with what it received.
    private struct Link: Sendable {
        var blip: BLIPConnection
        var inbox: BLIPReplicatorInbox
    }

    private var link: Task<Link, any Error>?
    /// Batches read and not answered yet, by handle, with the connection they came on.
    private var unanswered: [Int: (link: Link, batch: BLIPReplicatorInbox.ChangesBatch)] = [:]
    private var nextHandle = 1
    private var checkpointRevisions: [String: String] = [:]
    /// Whether pulled revisions may come as deltas (until a delta's base is missing here).
    private var takesDeltas = true
    private var announcedDeltas = false
    /// Whether pushes offer with `proposeChanges` (the server refused `changes`), for the rest of the replication.
    private var proposesChanges = false
    /// The server's current revision of each document whose proposal it answered 409 (nil when it did not say),
    /// by document and proposed revision, until that revision is sent or refused.
    private var proposalConflicts: [String: [String: String?]] = [:]

    /// The most ancestors a pulled `rev` carries in its history.
    static let maximumHistory = 20

    init(
        url: URL, authenticator: (any Authenticator)?, headers: [String: String], channels: [String]? = nil,
        continuous: Bool, trust: ServerTrust, local: BLIPLocalContent
    ) {
        let base = RemoteDatabaseClient.displayURL(of: url).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        identity = RemoteReplicationPeer.identity(displayURL: base, channels: channels)
        endpoint = URL(string: base + "/_blipsync") ?? url
        var http = URLComponents(url: url, resolvingAgainstBaseURL: false)
        http?.scheme = url.scheme?.lowercased() == "wss" ? "https" : "http"
        let allHeaders = headers.merging(authenticator?.headers ?? [:]) { _, authentication in authentication }
        database = RemoteDatabaseClient(url: http?.url ?? url, headers: allHeaders, trust: trust)
        self.headers = allHeaders
        self.channels = channels
        self.continuous = continuous
        self.trust = trust
        self.local = local
    }

    // MARK: - The connection

    /// The open connection, opened now when there is none.
    private func openLink() async throws -> Link {
        if let existing = link {
            if let current = try? await existing.value, await !current.blip.isClosed { return current }
            // Two calls (two stores under way) can both find the connection gone: the one that waited longest takes
            // the connection the other started instead of opening (and leaking) one more.
            if let newer = link, newer != existing { return try await newer.value }
        }
        let opening = Task { [endpoint, database, headers, trust, local] in
            let inbox = BLIPReplicatorInbox(local: local)
            let connection = try await BLIPReplicatorSocket.connect(
                endpoint: endpoint, database: database, headers: headers,
                tls: try await trust.tlsConfiguration(for: endpoint),
                observer: { [weak inbox] request in inbox?.observe(request) },
                handler: { [weak inbox] request, connection in
                    guard let inbox else { return request.errorReply(domain: "BLIP", code: 503, message: "closing") }
                    return await inbox.handle(request, on: connection)
                },
                closed: { inbox.close() })
            return Link(blip: connection, inbox: inbox)
        }
        link = opening
        announcedDeltas = false
        return try await opening.value
    }

    func close() async {
        unanswered = [:]
        guard let link else { return }
        self.link = nil
        if let current = try? await link.value {
            await current.blip.close()
            current.inbox.close()
        }
    }

    /// Sends a request and returns its reply; an `ERR` reply throws as its status says.
    private func request(
        _ properties: BLIPProperties, body: [UInt8] = [], on link: Link, urgent: Bool = false
    ) async throws -> BLIPMessage {
        let reply: BLIPMessage
        do {
            reply = try await link.blip.send(
                properties: properties, body: body, urgent: urgent, compressed: !body.isEmpty)
        } catch {
            throw BLIPRevisionMessage.closedError
        }
        if let error = reply.error { throw BLIPRevisionMessage.error(error) }
        return reply
    }

    // MARK: - Pulling

    func changes(since: String?, limit: Int) async throws -> ReplicationChanges {
        var link = try await openLink()
        if let position = link.inbox.subscribedSince, position != since {
            // Another position than the subscription's: only a new connection can start over.
            await close()
            link = try await openLink()
        }
        if link.inbox.subscribedSince == nil {
            try await subscribe(since: since, on: link)
        }
        var next = try await link.inbox.nextChanges()
        while next == nil, !continuous, link.inbox.deliveredSinceSubscribing {
            // A one-shot subscription ends at the sequence current when it began; a document changed meanwhile (by
            // this replicator's own push, say) moved past it. Caught up means a subscription that brings nothing.
            try await subscribe(since: since, on: link)
            next = try await link.inbox.nextChanges()
        }
        guard let batch = next else {
            return ReplicationChanges(changes: [], lastSequence: since)
        }
        // One change per document: the leaves of a conflicted one come as entries of their own.
        var changes: [ReplicationChange] = []
        var positions: [String: Int] = [:]
        for case let entry? in batch.entries {
            let id = entry.documentID
            if let position = positions[id] {
                changes[position].revisionIDs.append(entry.revisionID)
                continue
            }
            positions[id] = changes.count
            changes.append(
                ReplicationChange(
                    documentID: id, revisionIDs: [entry.revisionID], isDeleted: entry.isDeleted,
                    isRevoked: entry.isRevoked))
        }
        let handle = nextHandle
        nextHandle += 1
        unanswered[handle] = (link, batch)
        return ReplicationChanges(
            changes: changes, lastSequence: batch.entries.last??.sequence.serializedString() ?? since, handle: handle)
    }

    /// `subChanges` from `since` (JSON text; nil from the start): this side's channels, revocation entries, and
    /// continuous when the replicator is.
    private func subscribe(since: String?, on link: Link) async throws {
        // `style: all_docs` (Couchette's own): every leaf of a conflicted document, as a REST pull gets them; a
        // genuine Couchbase Lite client does not ask, and is sent the current revision only, as by Sync Gateway.
        let subscription = SubChangesRequest(
            continuous: continuous, allLeaves: true,
            filter: channels == nil ? nil : "sync_gateway/bychannel", channels: channels?.joined(separator: ","),
            revocations: true)
        link.inbox.subscribed(since: since)
        // Batches that came on an earlier connection can no longer be answered.
        unanswered = unanswered.filter { $0.value.link.inbox === link.inbox }
        var properties = subscription.message.properties
        // The position goes back as the JSON text of the last entry's sequence, as it came.
        if let since { properties["since"] = since }
        _ = try await request(properties, on: link)
    }

    /// Revisions are only ever sent in answer to a `changes` message (``revisions(_:of:)``).
    func revisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        throw CouchetteError(.unsupported, message: "A BLIP peer sends revisions only in answer to its changes")
    }

    /// Answers the batch's `changes` message on the connection it came on: the wanted revisions with their known
    /// ancestors, the others `0`; then waits for each wanted one's `rev` (left out when a `norev` came instead).
    ///
    /// - Throws: The closed connection's error when the batch can no longer be answered — its connection is gone, or
    ///   a new subscription replaced it (the pass lists the next batch meanwhile, and a cut makes that open a new
    ///   connection): the pass must then fail and go again from its checkpoint. Answering with no revisions would
    ///   have it store nothing and checkpoint past the batch, whose changes no later pass would bring.
    func revisions(_ wanted: [WantedRevision], of changes: ReplicationChanges) async throws -> [ReplicatedRevision] {
        guard let handle = changes.handle else { return [] }
        guard let (link, batch) = unanswered.removeValue(forKey: handle), await !link.blip.isClosed else {
            throw BLIPRevisionMessage.closedError
        }
        var known: [String: [String]] = [:]
        for item in wanted { known[BLIPReplicatorInbox.key(item.documentID, item.revisionID)] = item.knownAncestors }
        let answers: [JSONValue] = batch.entries.map { entry in
            guard let entry, let ancestors = known[BLIPReplicatorInbox.key(entry.documentID, entry.revisionID)] else {
                return RevsDiffAnswer.have.json
            }
            return RevsDiffAnswer.wanted(knownAncestors: Array(ancestors.prefix(Self.maximumHistory))).json
        }
        var properties: BLIPProperties = ["maxHistory": String(Self.maximumHistory)]
        if takesDeltas && !announcedDeltas {
            properties["deltas"] = "true"
            announcedDeltas = true
        }
        await link.blip.respond(
            to: batch.message,
            with: batch.message.reply(answers: answers, properties: properties))
        var revisions: [ReplicatedRevision] = []
        for item in wanted {
            switch await link.inbox.arrival(of: BLIPReplicatorInbox.key(item.documentID, item.revisionID)) {
            case .success(let revision?): revisions.append(revision)
            case .success(nil): continue  // norev: gone or no longer readable
            case .failure(let error):
                try Task.checkCancellation()
                if error.status == 404 && takesDeltas {
                    // A delta against a revision whose body is gone here: the next connection asks for whole bodies.
                    takesDeltas = false
                    await close()
                    throw CouchetteError(.network, message: "\(error.message); reconnecting without delta sync")
                }
                throw error
            }
        }
        return revisions
    }

    func waitForChanges(since: String?, timeout: Duration) async throws {
        let link = try await openLink()
        guard link.inbox.subscribedSince != nil else { return }
        let inbox = link.inbox
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await inbox.waitForChanges() }
            group.addTask {
                try await Task.sleep(for: timeout)
                inbox.wakeChangesWaiter()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    // MARK: - Pushing

    /// `changes` with the offered revisions, answered like `_revs_diff`: `0` for those the server has, else the
    /// revisions it has that may be their ancestors. Once the server refused `changes` (409), `proposeChanges`
    /// (``proposedRevisions(_:on:)``).
    func revsDiff(_ revisions: [String: [String]]) async throws -> [String: MissingRevisions] {
        let link = try await openLink()
        var offered: [(String, String)] = []
        for (id, revisionIDs) in revisions.sorted(by: { $0.key < $1.key }) {
            offered += revisionIDs.map { (id, $0) }
        }
        guard !offered.isEmpty else { return [:] }
        if proposesChanges { return try await proposedRevisions(revisions, on: link) }
        let entries = offered.enumerated().map { index, item in
            OfferedChange(sequence: .int(Int64(index + 1)), documentID: item.0, revisionID: item.1)
        }
        let reply: BLIPMessage
        do {
            reply = try await request(
                ["Profile": "changes"], body: OfferedChange.body(of: entries), on: link, urgent: true)
        } catch let error as CouchetteError where error.status == 409 {
            // "Use 'proposeChanges' instead": the server allows no conflicts.
            proposesChanges = true
            return try await proposedRevisions(revisions, on: link)
        }
        var missing: [String: MissingRevisions] = [:]
        let answers = RevsDiffAnswer.answers(in: reply.body, count: offered.count)
        for ((id, revision), answer) in zip(offered, answers) {
            guard case .wanted(let ancestors) = answer else { continue }
            missing[id, default: MissingRevisions(missing: [])].missing.append(revision)
            missing[id]?.possibleAncestors += ancestors
        }
        return missing
    }

    /// `proposeChanges` with each document's current revision (the first offered: the local source lists it first;
    /// a server allowing no conflicts takes no other branch) and `conflictIncludesRev` (spec:
    /// blip-sync-protocol.md §3.5), naming no server revision (the replicator keeps no record of which revision the
    /// server last had): `0` and `304` are taken as they are; a 409 — the server's current revision is another — is
    /// kept with the revision the server names, and ``store(_:)`` decides once it has the revision's history.
    private func proposedRevisions(_ revisions: [String: [String]], on link: Link) async throws
        -> [String: MissingRevisions]
    {
        let offered = revisions.sorted { $0.key < $1.key }.compactMap { id, revisionIDs in
            revisionIDs.first.map { (id, $0) }
        }
        let entries = offered.map { ProposedChange(documentID: $0.0, revisionID: $0.1).json }
        let reply = try await request(
            ["Profile": "proposeChanges", "conflictIncludesRev": "true"], body: JSONValue.array(entries).serialized(),
            on: link, urgent: true)
        let answers = (try? JSONValue(parsing: reply.body).arrayValue) ?? []
        // Entries of revisions never stored (a filter refused them) would stay: past a bound half of them go (one
        // lost only leaves the refusal to the server).
        if proposalConflicts.count > 10_000 {
            for id in proposalConflicts.keys.prefix(proposalConflicts.count - 5_000) { proposalConflicts[id] = nil }
        }
        var missing: [String: MissingRevisions] = [:]
        for (index, (id, revision)) in offered.enumerated() {
            // Trailing zeros may be left out.
            let answer = ProposalAnswer(json: index < answers.count ? answers[index] : nil)
            if answer == .have { continue }
            missing[id, default: MissingRevisions(missing: [])].missing.append(revision)
            if case .conflict(let current) = answer {
                proposalConflicts[id, default: [:]][revision] = .some(current)
                if let current { missing[id]?.possibleAncestors.append(current) }
            }
        }
        return missing
    }

    /// Sends each revision as a `rev` (``BLIPRevisionMessage/send(_:sequences:noConflicts:on:offering:)``); after
    /// `proposeChanges`, with `noconflicts`, and a revision whose proposal the server refused for a current revision
    /// not in its history is not sent: it is that document's 409.
    func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
        let link = try await openLink()
        guard proposesChanges else {
            return try await BLIPRevisionMessage.send(revisions, on: link.blip, offering: link.inbox.offered)
        }
        // Each revision's result in order: a refusal now, or nil for the answer of its `rev`.
        var refusals: [ReplicationWriteResult?] = []
        var sendable: [ReplicatedRevision] = []
        for revision in revisions {
            let conflict = proposalConflicts[revision.documentID]?.removeValue(forKey: revision.revisionID)
            if proposalConflicts[revision.documentID]?.isEmpty == true { proposalConflicts[revision.documentID] = nil }
            if case .some(.some(let current)) = conflict, !revision.history.contains(current) {
                var result = ReplicationWriteResult(
                    documentID: revision.documentID, revisionID: revision.revisionID, isDeleted: revision.isDeleted)
                result.error = CouchetteError(
                    .conflict, message: "Document update conflict: the server has \(current)", status: 409)
                refusals.append(result)
            } else {
                refusals.append(nil)
                sendable.append(revision)
            }
        }
        var answers = try await BLIPRevisionMessage.send(
            sendable, noConflicts: true, on: link.blip, offering: link.inbox.offered
        ).makeIterator()
        return refusals.compactMap { $0 ?? answers.next() }
    }

    // MARK: - Checkpoints

    func checkpoint(id: String) async throws -> [String: JSONValue]? {
        let link = try await openLink()
        do {
            let reply = try await request(["Profile": "getCheckpoint", "client": id], on: link)
            checkpointRevisions[id] = reply.properties["rev"]
            return try JSONValue(parsing: reply.body).objectValue
        } catch let error as CouchetteError where error.status == 404 {
            checkpointRevisions[id] = nil
            return nil
        }
    }

    /// Saves with the revision last seen; on 409 reads the current one and saves again.
    func saveCheckpoint(_ checkpoint: [String: JSONValue], id: String) async throws {
        let link = try await openLink()
        let body = JSONValue.object(checkpoint).serialized()
        for attempt in 0..<2 {
            do {
                let reply = try await request(
                    ["Profile": "setCheckpoint", "client": id, "rev": checkpointRevisions[id] ?? ""], body: body,
                    on: link)
                checkpointRevisions[id] = reply.properties["rev"]
                return
            } catch let error as CouchetteError where error.status == 409 && attempt == 0 {
                _ = try await self.checkpoint(id: id)
            }
        }
    }
}
