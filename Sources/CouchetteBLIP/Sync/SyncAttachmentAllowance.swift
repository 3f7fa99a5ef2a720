// MARK: - SyncAttachmentAllowance

/// The attachments a connection's client may fetch with `getAttachment`: those of the revisions sent to it and not
/// yet acknowledged, by document (spec: blip-sync-protocol.md §3.8). Serving any digest the database holds would let
/// a user read attachments of documents outside their channels.
actor SyncAttachmentAllowance {
    private var allowed: [String: [String: Int]] = [:]

    /// Allows `digests` of document `id` until ``revoke(_:of:)`` (a revision being sent).
    func allow(_ digests: [String], of id: String) {
        for digest in digests { allowed[id, default: [:]][digest, default: 0] += 1 }
    }

    /// Takes back what ``allow(_:of:)`` gave (the revision was acknowledged).
    func revoke(_ digests: [String], of id: String) {
        for digest in digests {
            guard let count = allowed[id]?[digest] else { continue }
            allowed[id]?[digest] = count > 1 ? count - 1 : nil
        }
        if allowed[id]?.isEmpty == true { allowed[id] = nil }
    }

    /// Whether `digest` may be served: for document `id`, or for any document when the client names none.
    func permits(_ digest: String, of id: String?) -> Bool {
        if let id { return allowed[id]?[digest] != nil }
        return allowed.values.contains { $0[digest] != nil }
    }
}
