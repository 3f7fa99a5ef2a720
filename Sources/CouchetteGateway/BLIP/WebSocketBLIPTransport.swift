import CouchetteBLIP
import HummingbirdWebSocket
import NIOCore

// MARK: - WebSocketBLIPTransport

/// A ``BLIPConnection``'s frames over an upgraded WebSocket: one binary message per frame.
struct WebSocketBLIPTransport: BLIPTransport {
    /// The socket's sending side.
    let outbound: WebSocketOutboundWriter

    func send(_ frame: ByteBuffer) async throws {
        try await outbound.write(.binary(frame))
    }

    func close(code: Int, reason: String) async {
        switch code {
        case 1000: try? await outbound.close(.normalClosure, reason: reason)
        case 1002: try? await outbound.close(.protocolError, reason: reason)
        case 1003: try? await outbound.close(.unacceptableData, reason: reason)
        default: try? await outbound.close(.unknown(UInt16(clamping: code)), reason: reason)
        }
    }
}
