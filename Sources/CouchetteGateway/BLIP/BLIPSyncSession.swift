import CouchetteBLIP
import CouchetteCore
import HummingbirdWebSocket
import Logging
import NIOCore

// MARK: - BLIPSyncSession

/// One Couchbase Lite replication connection (`/{db}/_blipsync`), the gateway's passive side of the BLIP sync
/// protocol (spec: blip-sync-protocol.md §3): answers the client's requests as the user who opened it.
///
/// Messages handled so far: `getCheckpoint` and `setCheckpoint` (checkpoints kept as the local documents
/// `_local/checkpoint/{client}`, as Sync Gateway keeps them). Others get `ERR BLIP/404`.
struct BLIPSyncSession: Sendable {
    /// The database and the caller.
    let target: AuthorizedDatabase
    /// The negotiated subprotocol (`BLIP_3+CBMobile_3` or `…_2`).
    let subprotocol: String

    /// The largest WebSocket message (one BLIP frame) accepted.
    static let maximumFrameSize = 1 << 20

    // MARK: - Running

    /// Runs the connection until either side closes it.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger) async {
        let connection = BLIPConnection(transport: WebSocketBLIPTransport(outbound: outbound)) { request in
            await handle(request)
        }
        do {
            for try await message in inbound.messages(maxSize: Self.maximumFrameSize) {
                guard case .binary(let frame) = message else {
                    // BLIP uses binary messages only (§1.5).
                    await WebSocketBLIPTransport(outbound: outbound).close(code: 1003, reason: "BLIP frames are binary")
                    break
                }
                await connection.receive(frame)
            }
        } catch {
            logger.debug("BLIP connection ended", metadata: ["error": "\(error)"])
        }
        await connection.transportClosed()
    }

    // MARK: - Requests

    /// The response to one request.
    func handle(_ request: BLIPMessage) async -> BLIPMessage? {
        switch request.profile {
        case "getCheckpoint": return getCheckpoint(request)
        case "setCheckpoint": return setCheckpoint(request)
        default: return request.errorReply(domain: "BLIP", code: 404, message: "no handler for message")
        }
    }

    /// `getCheckpoint` (§3.1): the checkpoint's `rev` and body, or `ERR HTTP/404`.
    func getCheckpoint(_ request: BLIPMessage) -> BLIPMessage {
        guard let client = request.properties["client"], !client.isEmpty else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing client")
        }
        do {
            let stored = try target.localDocument(id: Self.checkpointID(client))
            guard case .object(var members) = stored, let revision = members["_rev"]?.stringValue else {
                return request.errorReply(domain: "HTTP", code: 500, message: "unreadable checkpoint")
            }
            members["_id"] = nil
            members["_rev"] = nil
            return request.reply(properties: ["rev": revision], body: JSONValue.object(members).serialized())
        } catch {
            return Self.errorReply(to: request, error)
        }
    }

    /// `setCheckpoint` (§3.2): stores the body if `rev` names the stored revision (empty or absent: none stored);
    /// replies with the new `rev`, else `ERR HTTP/409`.
    func setCheckpoint(_ request: BLIPMessage) -> BLIPMessage {
        guard let client = request.properties["client"], !client.isEmpty else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing client")
        }
        guard case .object(var members)? = try? JSONValue(parsing: request.body) else {
            return request.errorReply(domain: "HTTP", code: 400, message: "the checkpoint must be a JSON object")
        }
        let expected = request.properties["rev"].flatMap { $0.isEmpty ? nil : $0 }
        members["_rev"] = expected.map(JSONValue.string)
        do {
            let revision = try target.putLocalDocument(id: Self.checkpointID(client), body: .object(members))
            return request.reply(properties: ["rev": revision])
        } catch where error.statusCode == 404 || error.statusCode == 409 {
            return request.errorReply(domain: "HTTP", code: 409, message: "Document update conflict")
        } catch {
            return Self.errorReply(to: request, error)
        }
    }

    // MARK: - Helpers

    /// The local document holding a client's checkpoint, as Sync Gateway names it.
    static func checkpointID(_ client: String) -> String { "checkpoint/" + client }

    /// `ERR HTTP/<status>` with the error's reason.
    static func errorReply(to request: BLIPMessage, _ error: GatewayError) -> BLIPMessage {
        request.errorReply(domain: "HTTP", code: error.statusCode, message: error.reason)
    }
}
