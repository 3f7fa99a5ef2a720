import AsyncHTTPClient
import CouchetteCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

// MARK: - RemoteReplicationPeer

/// A remote database as a replication peer, over the CouchDB replication protocol (replication-protocol.md §3):
/// `_changes` (normal feed, `style=all_docs`), `_revs_diff`, `_bulk_get` (JSON form, with revisions and
/// attachments), `_bulk_docs` with `new_edits=false`, and checkpoints in `_local` documents.
///
/// A 401 or 403 from the database stops the replication with that status; other HTTP failures and network errors
/// are ``CouchetteError/Code/network`` errors carrying the status.
final class RemoteReplicationPeer: ReplicationPeer, Sendable {
    /// The database's URL, without a trailing slash.
    let url: URL
    /// Headers sent with every request (authentication included).
    let headers: [String: String]
    /// Read changes of these channels only (`filter=sync_gateway/bychannel`); nil for all.
    let channels: [String]?
    /// The `_local` revision of each checkpoint as this peer last saved it.
    private let checkpointRevisions = Mutex<[String: String]>([:])

    init(url: URL, authenticator: (any Authenticator)?, headers: [String: String], channels: [String]? = nil) {
        self.channels = channels
        self.url = url.absoluteString.hasSuffix("/") ? url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent) : url
        self.headers = headers.merging(authenticator?.headers ?? [:]) { _, authentication in authentication }
    }

    /// The URL without credentials, with the channel filter.
    var identity: String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        let base = components?.string ?? url.absoluteString
        return channels.map { "\(base)?channels=\($0.sorted().joined(separator: ","))" } ?? base
    }

    /// The `_changes` parameters of the channel filter.
    private var filterQuery: [String] {
        guard let channels else { return [] }
        return ["filter=sync_gateway/bychannel", "channels=\(Self.escape(channels.joined(separator: ",")))"]
    }

    func changes(since: String?, limit: Int) async throws -> ReplicationChanges {
        var query = ["style=all_docs", "limit=\(limit)"] + filterQuery
        if let since { query.append("since=\(Self.escape(since))") }
        let json = try await send(.GET, "_changes", query: query)
        var changes: [ReplicationChange] = []
        for entry in json["results"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, !id.hasPrefix("_user/") else { continue }
            let revisions = (entry["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue }
            guard !revisions.isEmpty else { continue }
            changes.append(
                ReplicationChange(documentID: id, revisionIDs: revisions, isDeleted: entry["deleted"]?.boolValue ?? false))
        }
        return ReplicationChanges(changes: changes, lastSequence: Self.sequenceText(json["last_seq"]))
    }

    func revsDiff(_ revisions: [String: [String]]) async throws -> [String: [String]] {
        let body = JSONValue.object(revisions.mapValues { .array($0.map(JSONValue.string)) })
        let json = try await send(.POST, "_revs_diff", body: body)
        var missing: [String: [String]] = [:]
        for (id, entry) in json.objectValue ?? [:] {
            let revisions = (entry["missing"]?.arrayValue ?? []).compactMap(\.stringValue)
            if !revisions.isEmpty { missing[id] = revisions }
        }
        return missing
    }

    func revisions(_ wanted: [(documentID: String, revisionID: String)]) async throws -> [ReplicatedRevision] {
        guard !wanted.isEmpty else { return [] }
        let request = JSONValue.object([
            "docs": .array(wanted.map { ["id": .string($0.documentID), "rev": .string($0.revisionID)] })
        ])
        let json = try await send(.POST, "_bulk_get", query: ["revs=true", "attachments=true"], body: request)
        var revisions: [ReplicatedRevision] = []
        for result in json["results"]?.arrayValue ?? [] {
            for entry in result["docs"]?.arrayValue ?? [] {
                guard let body = entry["ok"]?.objectValue, let revision = try Self.revision(from: body) else { continue }
                revisions.append(revision)
            }
        }
        return revisions
    }

    func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
        guard !revisions.isEmpty else { return [] }
        let documents = revisions.map(Self.json(of:))
        let json = try await send(.POST, "_bulk_docs", body: ["docs": .array(documents), "new_edits": false])
        let results = json.arrayValue ?? []
        return revisions.enumerated().map { index, revision in
            var written = ReplicationWriteResult(
                    documentID: revision.documentID, revisionID: revision.revisionID, isDeleted: revision.isDeleted)
            if index < results.count, let status = results[index]["status"]?.intValue, status >= 400 {
                written.error = Self.error(
                    status: Int(status), reason: results[index]["reason"]?.stringValue ?? "refused")
            }
            return written
        }
    }

    func checkpoint(id: String) async throws -> [String: JSONValue]? {
        do {
            return try await send(.GET, "_local/\(id)").objectValue?.filter { !$0.key.hasPrefix("_") }
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
                return try remember(await send(.PUT, "_local/\(id)", body: .object(body)), id: id)
            } catch let error as CouchetteError where error.status == 409 {}
        }
        body["_rev"] = nil
        do {
            if let revision = try await send(.GET, "_local/\(id)")["_rev"] { body["_rev"] = revision }
        } catch let error as CouchetteError where error.status == 404 {}
        try remember(await send(.PUT, "_local/\(id)", body: .object(body)), id: id)
    }

    private func remember(_ response: JSONValue, id: String) {
        checkpointRevisions.withLock { $0[id] = response["rev"]?.stringValue }
    }

    func waitForChanges(since: String?, timeout: Duration) async throws {
        var query = ["feed=longpoll", "limit=1", "timeout=\(timeout.components.seconds * 1000)"] + filterQuery
        if let since { query.append("since=\(Self.escape(since))") }
        _ = try await send(.GET, "_changes", query: query, timeout: timeout + .seconds(30))
    }

    // MARK: - Documents on the wire

    /// A `_bulk_get` body (`_revisions`, attachments with `data`) as a replicated revision.
    static func revision(from body: [String: JSONValue]) throws -> ReplicatedRevision? {
        guard let id = body["_id"]?.stringValue, let rev = body["_rev"]?.stringValue else { return nil }
        var history = [rev]
        if let revisions = body["_revisions"], let start = revisions["start"]?.intValue {
            history = (revisions["ids"]?.arrayValue ?? []).enumerated().compactMap { offset, digest in
                digest.stringValue.map { "\(start - Int64(offset))-\($0)" }
            }
        }
        var stored = body.filter { !["_id", "_rev", "_revisions", "_deleted"].contains($0.key) }
        var blobs: [String: Blob] = [:]
        if var attachments = body["_attachments"]?.objectValue {
            for (name, entry) in attachments {
                guard var metadata = entry.objectValue, let data = metadata["data"]?.stringValue else { continue }
                guard let bytes = Data(base64Encoded: data) else {
                    throw CouchetteError(.badInput, message: "Attachment \"\(name)\" of \"\(id)\" is not base64")
                }
                blobs[name] = Blob(contentType: metadata["content_type"]?.stringValue ?? "application/octet-stream", data: bytes)
                metadata["data"] = nil
                metadata["stub"] = true
                if metadata["digest"] == nil { metadata["digest"] = .string(AttachmentDigest.sha1(of: Array(bytes)).description) }
                if metadata["length"] == nil { metadata["length"] = .int(Int64(bytes.count)) }
                attachments[name] = .object(metadata)
            }
            stored["_attachments"] = .object(attachments)
        }
        return ReplicatedRevision(
            documentID: id, revisionID: rev, history: history, isDeleted: body["_deleted"]?.boolValue ?? false,
            body: stored, attachments: blobs)
    }

    /// A revision as `_bulk_docs` with `new_edits=false` takes it: `_revisions`, and attachments with `data`.
    static func json(of revision: ReplicatedRevision) -> JSONValue {
        var body = revision.body
        body["_id"] = .string(revision.documentID)
        body["_rev"] = .string(revision.revisionID)
        if revision.isDeleted { body["_deleted"] = true }
        let generation = Int64(revision.revisionID.split(separator: "-").first.flatMap { Int($0) } ?? revision.history.count)
        body["_revisions"] = [
            "start": .int(generation),
            "ids": .array(revision.history.map { .string(String($0.split(separator: "-", maxSplits: 1).last ?? "")) }),
        ]
        if var attachments = body["_attachments"]?.objectValue {
            for (name, blob) in revision.attachments {
                guard var metadata = attachments[name]?.objectValue, let content = blob.content else { continue }
                metadata["stub"] = nil
                metadata["data"] = .string(content.base64EncodedString())
                attachments[name] = .object(metadata)
            }
            body["_attachments"] = .object(attachments)
        }
        return .object(body)
    }

    // MARK: - HTTP

    private func send(
        _ method: HTTPMethod, _ path: String, query: [String] = [], body: JSONValue? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> JSONValue {
        var request = HTTPClientRequest(
            url: url.absoluteString + "/" + path + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        }
        let response: HTTPClientResponse
        var bytes: ByteBuffer
        do {
            response = try await ReplicatorHTTPClient.shared.execute(request, timeout: .init(timeout))
            bytes = try await response.body.collect(upTo: 256 << 20)
        } catch {
            try Task.checkCancellation()
            throw CouchetteError(.network, message: "\(method) \(identity)/\(path): \(error)")
        }
        let json = (try? JSONValue(parsing: bytes.readBytes(length: bytes.readableBytes) ?? [])) ?? .null
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            throw Self.error(status: status, reason: json["reason"]?.stringValue ?? response.status.reasonPhrase)
        }
        return json
    }

    /// The error for an HTTP status: 401/403/404/409 keep their meaning, others are network errors.
    static func error(status: Int, reason: String) -> CouchetteError {
        let code: CouchetteError.Code =
            switch status {
            case 400: .badInput
            case 401: .unauthorized
            case 403: .forbidden
            case 404: .notFound
            case 409: .conflict
            default: .network
            }
        return CouchetteError(code, message: reason, status: status)
    }

    private static func sequenceText(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        case nil, .null?: nil
        case let value?: value.serializedString()
        }
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
