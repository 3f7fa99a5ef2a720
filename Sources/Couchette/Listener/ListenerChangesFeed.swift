import CouchetteCore
import Hummingbird
import HummingbirdCore
import NIOCore

// MARK: - ListenerChangesFeed

/// A served collection's `_changes`: CouchDB's normal, longpoll and continuous feeds, one row per document with its
/// current revision (every leaf with `style=all_docs`), sequences as integers.
struct ListenerChangesFeed: Sendable {
    /// How long a longpoll waits when the client gives no `timeout`.
    static let defaultLongpollTimeout = Duration.seconds(60)
    /// The most rows read from the collection at once by a continuous feed.
    static let continuousBatch = 500

    let collection: ListenerCollection
    let since: UInt64
    let limit: Int
    let allLeaves: Bool
    let includeDocs: Bool
    let feed: String
    let timeout: Duration?
    let heartbeat: Duration?

    init(collection: ListenerCollection, query: FlatDictionary<Substring, Substring>) throws {
        self.collection = collection
        let since = query.get("since")
        self.since = since == "now" ? collection.collection.lastSequence : UInt64(since ?? "0") ?? 0
        limit = query.get("limit").flatMap(Int.init).map { max(1, $0) } ?? Int.max
        allLeaves = query.get("style") == "all_docs"
        includeDocs = query.get("include_docs") == "true"
        feed = query.get("feed") ?? "normal"
        guard ["normal", "longpoll", "continuous"].contains(feed) else {
            throw CouchetteError(.badInput, message: "Unknown feed \"\(feed)\": use normal, longpoll or continuous")
        }
        timeout = query.get("timeout").flatMap(Int.init).map { Duration.milliseconds(max(0, $0)) }
        heartbeat = query.get("heartbeat").flatMap(Int.init).map { Duration.milliseconds(max(1, $0)) }
    }

    func response() async throws -> Response {
        if feed == "continuous" {
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(continuous))
        }
        var (rows, last) = try await rows(since: since, limit: limit)
        if rows.isEmpty, feed == "longpoll" {
            try await collection.peer.waitForChanges(since: String(since), timeout: timeout ?? Self.defaultLongpollTimeout)
            (rows, last) = try await self.rows(since: since, limit: limit)
        }
        return ListenerReply.json(["results": .array(rows), "last_seq": .int(Int64(last))])
    }

    /// Rows after `since`, one a line, as they come; ends after `limit` rows, after `timeout` without a change, or
    /// when the client goes. A newline every `heartbeat` while idle keeps the connection open.
    private func continuous(_ writer: inout any ResponseBodyWriter) async throws {
        var since = since
        var sent = 0
        var idleSince = ContinuousClock.now
        var waited = false
        while sent < limit {
            let (rows, last) = try await rows(since: since, limit: min(limit - sent, Self.continuousBatch))
            since = last
            if !rows.isEmpty {
                var lines: [UInt8] = []
                for row in rows { lines += row.serialized() + [UInt8(ascii: "\n")] }
                try await writer.write(ByteBuffer(bytes: lines))
                sent += rows.count
                idleSince = .now
                waited = false
                continue
            }
            if waited, heartbeat != nil { try await writer.write(ByteBuffer(string: "\n")) }
            let idle = ContinuousClock.now - idleSince
            if let timeout, idle >= timeout { break }
            var wait = heartbeat ?? timeout ?? Self.defaultLongpollTimeout
            if let timeout { wait = min(wait, timeout - idle) }
            try await collection.peer.waitForChanges(since: String(since), timeout: wait)
            try Task.checkCancellation()
            waited = true
        }
        try await writer.write(ByteBuffer(bytes: JSONValue.object(["last_seq": .int(Int64(since))]).serialized() + [10]))
        try await writer.finish(nil)
    }

    /// The rows after `since` and the sequence to resume after them.
    private func rows(since: UInt64, limit: Int) async throws -> (rows: [JSONValue], last: UInt64) {
        let changes = try await collection.peer.changes(since: String(since), limit: limit)
        let rows = try changes.changes.map { change -> JSONValue in
            let revisions = allLeaves ? change.revisionIDs : Array(change.revisionIDs.prefix(1))
            var row: [String: JSONValue] = [
                "seq": .int(Int64(change.sequence ?? 0)), "id": .string(change.documentID),
                "changes": .array(revisions.map { ["rev": .string($0)] }),
            ]
            if change.isDeleted { row["deleted"] = true }
            if includeDocs, let current = try collection.collection.currentRevision(documentID: change.documentID) {
                row["doc"] = ListenerCollection.plainBody(of: current)
            }
            return .object(row)
        }
        return (rows, changes.lastSequence.flatMap(UInt64.init) ?? since)
    }
}
