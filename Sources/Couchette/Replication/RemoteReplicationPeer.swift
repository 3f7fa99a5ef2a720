import CouchetteCore
import Foundation
import NIOHTTP1
import Synchronization

// MARK: - RemoteReplicationPeer

/// A remote database as a replication peer, over the CouchDB replication protocol (replication-protocol.md §3):
/// `_changes` (normal feed, `style=all_docs`), `_revs_diff`, `_bulk_get` (JSON, with revisions; a document whose
/// attachments changed since what this side holds is read again with them, the large ones as `multipart/related`
/// parts; per-document `GET ?open_revs=` as `multipart/mixed` where the peer lacks `_bulk_get`),
/// `_bulk_docs` with `new_edits=false` (a revision with a large attachment to send goes alone as a
/// `multipart/related` `PUT`), and checkpoints in `_local` documents.
///
/// A 401 or 403 from the database stops the replication with that status; other HTTP failures and network errors
/// are ``CouchetteError/Code/network`` errors carrying the status.
final class RemoteReplicationPeer: ReplicationPeer, Sendable {
    /// Two `_bulk_docs` requests at once: the gateway stores one while the other travels.
    var concurrentStores: Int { 2 }

    /// Requests to the database.
    let client: RemoteDatabaseClient
    /// Read changes of these channels only (`filter=sync_gateway/bychannel`); nil for all.
    let channels: [String]?
    /// The `_local` revision of each checkpoint as this peer last saved it.
    private let checkpointRevisions = Mutex<[String: String]>([:])
    /// Attachment and blob digests this session sent the peer.
    private let knownDigests = Mutex<Set<AttachmentDigest>>([])
    /// Whether the peer took stubs of content it holds under another document (until it refuses one).
    private let resolvesStubsByDigest = Atomic<Bool>(true)
    /// Whether the peer answered `_bulk_get` as an unknown endpoint (then revisions are read one document at a time).
    private let lacksBulkGet = Atomic<Bool>(false)
    /// How many documents are read at once by single-document requests.
    static let documentRequestConcurrency = 4

    /// Whether the local side already holds an attachment's or blob's content (then it is not downloaded again).
    private let holdsContent: @Sendable (AttachmentDigest) -> Bool

    init(
        url: URL, authenticator: (any Authenticator)?, headers: [String: String], channels: [String]? = nil,
        trust: ServerTrust = .system, holdsContent: @escaping @Sendable (AttachmentDigest) -> Bool = { _ in false }
    ) {
        self.channels = channels
        self.holdsContent = holdsContent
        client = RemoteDatabaseClient(
            url: url, headers: headers.merging(authenticator?.headers ?? [:]) { _, authentication in authentication },
            trust: trust)
    }

    /// The URL without credentials, with the channel filter.
    var identity: String { Self.identity(displayURL: client.displayURL, channels: channels) }

    /// A remote peer's identity in replication IDs: its URL without credentials, with the channel filter.
    static func identity(displayURL: String, channels: [String]?) -> String {
        channels.map { "\(displayURL)?channels=\($0.sorted().joined(separator: ","))" } ?? displayURL
    }

    /// The `_changes` parameters of the channel filter.
    private var filterQuery: [String] {
        guard let channels else { return [] }
        return ["filter=sync_gateway/bychannel", "channels=\(RemoteDatabaseClient.escape(channels.joined(separator: ",")))"]
    }

    func changes(since: String?, limit: Int) async throws -> ReplicationChanges {
        // `revocations=true`: a Couchette gateway (like Sync Gateway 3) names documents the user lost access to.
        var query = ["style=all_docs", "revocations=true", "limit=\(limit)"] + filterQuery
        if let since { query.append("since=\(RemoteDatabaseClient.escape(since))") }
        let json = try await client.json(.GET, "_changes", query: query)
        var changes: [ReplicationChange] = []
        for entry in json["results"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, !id.hasPrefix("_user/") else { continue }
            let revisions = (entry["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue }
            guard !revisions.isEmpty else { continue }
            changes.append(
                ReplicationChange(
                    documentID: id, revisionIDs: revisions, isDeleted: entry["deleted"]?.boolValue ?? false,
                    isRevoked: entry["revoked"]?.boolValue ?? false))
        }
        return ReplicationChanges(changes: changes, lastSequence: Self.sequenceText(json["last_seq"]))
    }

    func revsDiff(_ revisions: [String: [String]]) async throws -> [String: MissingRevisions] {
        let body = JSONValue.object(revisions.mapValues { .array($0.map(JSONValue.string)) })
        let json = try await client.json(.POST, "_revs_diff", body: body)
        var missing: [String: MissingRevisions] = [:]
        for (id, entry) in json.objectValue ?? [:] {
            let revisions = (entry["missing"]?.arrayValue ?? []).compactMap(\.stringValue)
            guard !revisions.isEmpty else { continue }
            missing[id] = MissingRevisions(
                missing: revisions,
                possibleAncestors: (entry["possible_ancestors"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        return missing
    }

    // MARK: - Reading revisions

    func revisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        guard !wanted.isEmpty else { return [] }
        if !lacksBulkGet.load(ordering: .relaxed) {
            do {
                return try await bulkGet(wanted)
            } catch let error as CouchetteError where [400, 404, 405, 501].contains(error.status) {
                // CouchDB 1.x and other peers without the endpoint.
                lacksBulkGet.store(true, ordering: .relaxed)
            }
        }
        return try await openRevisions(wanted)
    }

    /// `_bulk_get` (JSON, attachments as stubs) for every wanted revision, in two requests at once for a large
    /// batch (the peer serializes one answer while it reads the other); then each revision with attachments
    /// changed since its known ancestors is read again with their content (``revisionWithAttachments(_:since:)``).
    private func bulkGet(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        guard wanted.count >= 64 else { return try await bulkGetRequest(wanted) }
        let middle = wanted.count / 2
        async let first = bulkGetRequest(Array(wanted[..<middle]))
        let second = try await bulkGetRequest(Array(wanted[middle...]))
        return try await first + second
    }

    private func bulkGetRequest(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        let items = wanted.map { item -> JSONValue in
            ["id": .string(item.documentID), "rev": .string(item.revisionID)]
        }
        let reply = try await client.send(.POST, "_bulk_get", query: ["revs=true"], body: .json(["docs": .array(items)]))
        var revisions = try Self.revisions(in: reply)
        let ancestors = WantedRevision.knownAncestors(of: wanted)
        let incomplete = revisions.indices.filter { index in
            let revision = revisions[index]
            // Content held here already (another document's, a blob seen before) is not downloaded again.
            return revision.attachmentsToSend(knownAncestors: ancestors[revision.documentID] ?? []).contains { name in
                revision.digest(ofAttachment: name).map { !holdsContent($0) } ?? true
            }
        }
        let stubbed = revisions
        let completed = try await concurrently(incomplete) { index in
            try await self.revisionWithAttachments(stubbed[index], since: ancestors[stubbed[index].documentID] ?? [])
        }
        var gone = Set<Int>()
        for (index, revision) in zip(incomplete, completed) {
            if let revision { revisions[index] = revision } else { gone.insert(index) }
        }
        return revisions.indices.filter { !gone.contains($0) }.map { revisions[$0] }
    }

    /// `GET /{db}/{doc}?rev=` with the content of the attachments changed since `ancestors`: small ones inline,
    /// large ones as parts of a `multipart/related` answer; nil when the revision is gone meanwhile or the answer
    /// holds no revision (a stub without its content is never stored).
    private func revisionWithAttachments(_ revision: ReplicatedRevision, since ancestors: [String]) async throws
        -> ReplicatedRevision?
    {
        var query = ["rev=\(RemoteDatabaseClient.escape(revision.revisionID))", "revs=true", "attachments=true"]
        if !ancestors.isEmpty { query.append("atts_since=\(Self.jsonList(ancestors))") }
        do {
            // A multipart answer is read as it arrives, its attachments into temporary files.
            return try await client.exchange(
                .GET, RemoteDatabaseClient.escape(revision.documentID), query: query,
                accept: "multipart/related, application/json"
            ) { response -> ReplicatedRevision? in
                if let contentType = response.headers.first(name: "Content-Type"),
                    HeaderValue(parsing: contentType).isMultipart
                {
                    return try await StreamedRelatedReader.revision(
                        from: response.body, contentType: contentType, files: try TemporaryFiles())
                }
                let bytes = try await response.body.collect(upTo: 256 << 20)
                guard case .object(let members) = try JSONValue(parsing: Array(buffer: bytes)) else { return nil }
                return try ReplicatedRevision(wireBody: members)
            }.1
        } catch let error as CouchetteError where error.status == 404 {
            return nil
        }
    }

    /// `body` applied to each item, at most ``documentRequestConcurrency`` at a time; the results in order.
    private func concurrently<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ body: @escaping @Sendable (Item) async throws -> Result
    ) async throws -> [Result] {
        var results = [Result?](repeating: nil, count: items.count)
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            for (index, item) in items.enumerated() {
                if index >= Self.documentRequestConcurrency, let (done, result) = try await group.next() {
                    results[done] = result
                }
                group.addTask { (index, try await body(item)) }
            }
            for try await (done, result) in group { results[done] = result }
        }
        return results.compactMap { $0 }
    }

    /// A list of revision IDs as a query value.
    private static func jsonList(_ items: [String]) -> String {
        RemoteDatabaseClient.escape(JSONValue.array(items.map(JSONValue.string)).serializedString())
    }

    /// `GET /{db}/{doc}?open_revs=[…]` for each document, a few at a time.
    private func openRevisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
        var byDocument: [(documentID: String, revisions: [String], ancestors: [String])] = []
        var positions: [String: Int] = [:]
        for item in wanted {
            if let position = positions[item.documentID] {
                byDocument[position].revisions.append(item.revisionID)
            } else {
                positions[item.documentID] = byDocument.count
                byDocument.append((item.documentID, [item.revisionID], item.knownAncestors))
            }
        }
        return try await concurrently(byDocument) { document in
            try await self.openRevisions(of: document.documentID, document.revisions, since: document.ancestors)
        }.flatMap { $0 }
    }

    private func openRevisions(of documentID: String, _ revisions: [String], since ancestors: [String]) async throws
        -> [ReplicatedRevision]
    {
        var query = ["open_revs=\(Self.jsonList(revisions))", "revs=true", "attachments=true"]
        if !ancestors.isEmpty { query.append("atts_since=\(Self.jsonList(ancestors))") }
        do {
            let reply = try await client.send(
                .GET, RemoteDatabaseClient.escape(documentID), query: query, accept: "multipart/mixed")
            return try Self.revisions(in: reply)
        } catch let error as CouchetteError where error.status == 404 {
            return []  // gone since the changes were read
        }
    }

    /// The revisions of a `_bulk_get` or `open_revs` answer, `multipart/mixed` or JSON; missing ones and errors are
    /// left out.
    static func revisions(in reply: RemoteDatabaseClient.Reply) throws -> [ReplicatedRevision] {
        guard let contentType = reply.contentType, HeaderValue(parsing: contentType).isMultipart else {
            let json = try JSONValue(parsing: reply.bytes)
            // `_bulk_get`: {"results": [{"docs": [{"ok": …}]}]}; `open_revs`: [{"ok": …}].
            let entries = json["results"]?.arrayValue?.flatMap { $0["docs"]?.arrayValue ?? [] } ?? json.arrayValue ?? []
            return try entries.compactMap { entry in
                try entry["ok"]?.objectValue.flatMap { try ReplicatedRevision(wireBody: $0) }
            }
        }
        return try MultipartBody(parsing: reply.bytes, contentType: contentType).parts.compactMap(revision(in:))
    }

    /// The revision in one part of a `multipart/mixed` answer: JSON, or a nested `multipart/related`.
    private static func revision(in part: MIMEPart) throws -> ReplicatedRevision? {
        guard let type = part.contentType, type.parameters["error"] == nil else { return nil }
        if type.mediaType == "multipart/related" {
            return try ReplicatedRevision(related: MultipartBody(parsing: part.body, contentType: type.description))
        }
        guard case .object(let members) = try JSONValue(parsing: part.body) else { return nil }
        return try ReplicatedRevision(wireBody: members)
    }

    // MARK: - Storing revisions

    /// Stores revisions by `_bulk_docs`, except those with a large attachment to send, put one by one as
    /// `multipart/related`. A refused document (400, 403, 409, 412, 413) is reported in its result.
    ///
    /// Content this session already sent the peer (another document's attachment, the same blob saved twice) goes
    /// as a stub, which a Couchette gateway resolves by digest. A peer that refuses such a stub (400 "Unknown
    /// attachment stub", CouchDB's 412 `missing_stub`, or a refused request) is sent those documents again whole, and
    /// is sent content whole from then on.
    func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
        let known = resolvesStubsByDigest.load(ordering: .relaxed) ? knownDigests.withLock { $0 } : []
        var trimmed = revisions
        var dropped = Set<Int>()
        for index in trimmed.indices {
            let before = trimmed[index].attachments.count
            trimmed[index].attachments = trimmed[index].attachments.filter { name, _ in
                trimmed[index].digest(ofAttachment: name).map { !known.contains($0) } ?? true
            }
            if trimmed[index].attachments.count != before { dropped.insert(index) }
        }
        var results: [ReplicationWriteResult]
        do {
            results = try await send(trimmed)
        } catch let error as CouchetteError where !dropped.isEmpty && [400, 412].contains(error.status) {
            resolvesStubsByDigest.store(false, ordering: .relaxed)
            results = try await send(revisions)
        }
        let retry = dropped.filter { [400, 412].contains(results[$0].error?.status) }.sorted()
        if !retry.isEmpty {
            resolvesStubsByDigest.store(false, ordering: .relaxed)
            let again = try await send(retry.map { revisions[$0] })
            for (index, result) in zip(retry, again) { results[index] = result }
        }
        learn(from: revisions.indices.filter { results[$0].error == nil }.map { revisions[$0] })
        return results
    }

    /// Remembers the content digests of revisions the peer now holds.
    private func learn(from revisions: [ReplicatedRevision]) {
        let digests = revisions.flatMap { revision in
            (revision.body["_attachments"]?.objectValue ?? [:]).keys.compactMap { revision.digest(ofAttachment: $0) }
        }
        guard !digests.isEmpty else { return }
        knownDigests.withLock { $0.formUnion(digests) }
    }

    private func send(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
        var results = revisions.map {
            ReplicationWriteResult(documentID: $0.documentID, revisionID: $0.revisionID, isDeleted: $0.isDeleted)
        }
        let inline = revisions.indices.filter { !revisions[$0].hasLargeAttachment }
        if !inline.isEmpty {
            let documents = inline.map { revisions[$0].wireBody }
            let json = try await client.json(.POST, "_bulk_docs", body: ["docs": .array(documents), "new_edits": false])
            let answers = json.arrayValue ?? []
            for (position, index) in inline.enumerated() where position < answers.count {
                guard let status = answers[position]["status"]?.intValue, status >= 400 else { continue }
                results[index].error = RemoteDatabaseClient.error(
                    status: Int(status), reason: answers[position]["reason"]?.stringValue ?? "refused")
            }
        }
        for index in revisions.indices where revisions[index].hasLargeAttachment {
            do {
                let streamed = revisions[index].streamedMultipartRelated
                _ = try await client.send(
                    .PUT, RemoteDatabaseClient.escape(revisions[index].documentID), query: ["new_edits=false"],
                    body: .stream(contentType: streamed.contentType, streamed.bytes))
            } catch let error as CouchetteError where [400, 403, 409, 412, 413, 415].contains(error.status) {
                results[index].error = error
            }
        }
        return results
    }

    // MARK: - Checkpoints

    func checkpoint(id: String) async throws -> [String: JSONValue]? {
        do {
            return try await client.json(.GET, "_local/\(id)").objectValue?.filter { !$0.key.hasPrefix("_") }
        } catch let error as CouchetteError where error.status == 404 {
            return nil
        }
    }

    /// Saves with the revision the last save returned (one request per batch); when unknown or stale, reads the
    /// current one first.
    func saveCheckpoint(_ checkpoint: [String: JSONValue], id: String) async throws {
        var body = checkpoint
        if let known = checkpointRevisions.withLock({ $0[id] }) {
            body["_rev"] = .string(known)
            do {
                return try remember(await client.json(.PUT, "_local/\(id)", body: .object(body)), id: id)
            } catch let error as CouchetteError where error.status == 409 {}
        }
        body["_rev"] = nil
        do {
            if let revision = try await client.json(.GET, "_local/\(id)")["_rev"] { body["_rev"] = revision }
        } catch let error as CouchetteError where error.status == 404 {}
        try remember(await client.json(.PUT, "_local/\(id)", body: .object(body)), id: id)
    }

    private func remember(_ response: JSONValue, id: String) {
        checkpointRevisions.withLock { $0[id] = response["rev"]?.stringValue }
    }

    func waitForChanges(since: String?, timeout: Duration) async throws {
        var query = ["feed=longpoll", "limit=1", "timeout=\(max(1, Int(timeout / .milliseconds(1))))"] + filterQuery
        if let since { query.append("since=\(RemoteDatabaseClient.escape(since))") }
        _ = try await client.json(.GET, "_changes", query: query, timeout: timeout + .seconds(30))
    }

    private static func sequenceText(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        case nil, .null?: nil
        case let value?: value.serializedString()
        }
    }
}
