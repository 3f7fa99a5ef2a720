import CouchetteBLIP
import CouchetteCore

// MARK: - GatewayRevisionReader

/// Reads the revisions a user's BLIP subscriber asked for (``SyncRevisionReader``): the wanted documents in one read
/// (one transaction, as a REST pull's `_bulk_get` reads them), each revision with the history the subscriber lacks
/// (at most `maxHistory` ancestors; a gap where the history joined an older revision is kept), as the stored body
/// when it can go as it is, else rebuilt — as a delta against a revision the subscriber knows when the database
/// enables delta sync, the subscriber takes deltas and the delta is smaller (§4.1). A revision the user may not read,
/// or one gone, is a `norev`.
struct GatewayRevisionReader: SyncRevisionReader {
    /// The database as the subscriber reads it now.
    let reader: AuthorizedDatabase

    func revisions(_ wanted: [WantedChange], maxHistory: Int, deltas: Bool) async throws -> [OutgoingRevision] {
        let snapshots = try? await reader.snapshots(ids: wanted.map(\.entry.documentID))
        return wanted.map { revision(of: $0, maxHistory: maxHistory, deltas: deltas, in: snapshots) }
    }

    /// The `rev` for one wanted entry, or a `norev` when it cannot be read.
    private func revision(
        of wanted: WantedChange, maxHistory: Int, deltas: Bool, in snapshots: [String: StoredDocument]?
    ) -> OutgoingRevision {
        let entry = wanted.entry
        let id = entry.documentID
        var message = RevisionMessage(
            documentID: id, revisionID: entry.revisionID, sequence: entry.sequence.serializedString())
        let deltaSync = reader.database.config.deltaSync
        do throws(GatewayError) {
            let revisionID = try DocumentValidation.parseRevision(entry.revisionID)
            let knownIDs = Set(wanted.knownAncestors.compactMap { try? RevisionID(parsing: $0) })
            let options = ReadOptions(
                includeRevisions: true, revisionsLimit: maxHistory + 1, revisionsFrom: knownIDs.isEmpty ? nil : knownIDs)
            // The stored body as it is, when no delta can replace it and no attachment needs allowing.
            if !deltaSync, let (text, history) = reader.storedText(id: id, revision: revisionID, options: options, in: snapshots),
                !DocumentStore.mayHaveAttachments(text)
            {
                message.history = history.dropFirst().map(\.description)
                message.body = text
                return .revision(message, attachmentDigests: [])
            }
            let revision = try reader.revision(id: id, revision: revisionID, options: options, in: snapshots)
            guard let body = RevisionMessage.properties(of: revision.body) else {
                throw .internalError("unreadable revision")
            }
            message.isDeleted = revision.body["_deleted"] == true
            let history =
                reader.sentHistory(id: id, revision: revisionID, options: options, in: snapshots)
                ?? (try? RevisionHistory(json: revision.body["_revisions"] ?? .null))?.revisionIDs ?? []
            message.history = history.dropFirst().map(\.description)
            message.body = JSONValue.object(body).serialized()
            if deltaSync, deltas, let (source, delta) = delta(
                of: .object(body), id: id, known: wanted.knownAncestors, fullSize: message.body.count)
            {
                message.deltaSource = source
                message.body = delta
            }
            let digests = (body["_attachments"]?.objectValue ?? [:]).values.compactMap { $0["digest"]?.stringValue }
            return .revision(message, attachmentDigests: digests)
        } catch {
            return .missing(wanted, status: error.statusCode, reason: error.reason)
        }
    }

    /// The body as a delta against the first revision the subscriber knows whose body is still here, when smaller.
    private func delta(of body: JSONValue, id: String, known: [String], fullSize: Int) -> (String, [UInt8])? {
        for source in known {
            guard let sourceID = try? RevisionID(parsing: source),
                let sourceRevision = try? reader.revision(id: id, revision: sourceID),
                sourceRevision.body["_removed"] == nil,
                let sourceBody = RevisionMessage.properties(of: sourceRevision.body)
            else { continue }
            let delta = JSONDelta.make(from: .object(sourceBody), to: body) ?? .object([:])
            let bytes = delta.serialized()
            return bytes.count < fullSize ? (source, bytes) : nil
        }
        return nil
    }
}
