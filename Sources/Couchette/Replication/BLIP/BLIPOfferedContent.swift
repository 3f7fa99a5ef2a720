import CouchetteBLIP
import CouchetteCore
import Foundation
import Synchronization

// MARK: - BLIPOfferedContent

/// The attachment content of revisions this side is sending as `rev` messages (spec: blip-sync-protocol.md §3.8,
/// §3.9), served to the other side's `getAttachment` while they await their answers, and proved by
/// `proveAttachment` (from what is being sent, or from the local store).
final class BLIPOfferedContent: Sendable {
    private let offered = Mutex<[AttachmentDigest: (blob: Blob, count: Int)]>([:])
    private let local: BLIPLocalContent

    init(local: BLIPLocalContent) {
        self.local = local
    }

    /// Offers the attachments of `revisions` until ``withdraw(_:)``.
    func offer(_ revisions: [ReplicatedRevision]) {
        offered.withLock { offered in
            for revision in revisions {
                for (name, blob) in revision.attachments {
                    guard let digest = revision.digest(ofAttachment: name) else { continue }
                    offered[digest, default: (blob, 0)].count += 1
                }
            }
        }
    }

    /// Withdraws what ``offer(_:)`` offered.
    func withdraw(_ revisions: [ReplicatedRevision]) {
        offered.withLock { offered in
            for revision in revisions {
                for name in revision.attachments.keys {
                    guard let digest = revision.digest(ofAttachment: name), let entry = offered[digest] else { continue }
                    offered[digest] = entry.count > 1 ? (entry.blob, entry.count - 1) : nil
                }
            }
        }
    }

    /// `getAttachment`: the content of a revision being sent (`ERR HTTP/404` for anything else), deflated when asked.
    func serveAttachment(_ request: BLIPMessage) -> BLIPMessage {
        guard let digest = request.properties["digest"].flatMap({ try? AttachmentDigest(parsing: $0) }) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing digest")
        }
        guard let blob = offered.withLock({ $0[digest]?.blob }), let content = blob.content else {
            return request.errorReply(domain: "HTTP", code: 404, message: "not being sent")
        }
        return request.reply(body: Array(content), isCompressed: request.properties.flag("compress"))
    }

    /// `proveAttachment` (§3.9): the SHA-1 of the nonce's length, the nonce and the content, as a digest string.
    func proveAttachment(_ request: BLIPMessage) -> BLIPMessage {
        guard let digest = request.properties["digest"].flatMap({ try? AttachmentDigest(parsing: $0) }) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing digest")
        }
        guard (16...255).contains(request.body.count) else {
            return request.errorReply(domain: "BLIP", code: 400, message: "the nonce must be 16 to 255 bytes")
        }
        let sending = offered.withLock { $0[digest]?.blob }
        guard let content = sending?.content ?? local.content(digest) else {
            return request.errorReply(domain: "HTTP", code: 404, message: "missing")
        }
        return request.reply(body: Array(AttachmentDigest.proof(of: content, nonce: request.body).description.utf8))
    }
}
