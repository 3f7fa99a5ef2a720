import NIOCore
import WSCore

// MARK: - WebSocketBLIPTransport

/// A ``BLIPConnection``'s frames over a WebSocket: one binary message per frame (spec: blip-sync-protocol.md §1.5).
/// The gateway's upgraded connections and the replicator's client sockets both use it.
///
/// ```swift
/// let connection = BLIPConnection(transport: WebSocketBLIPTransport(outbound: outbound), handler: handle)
/// await WebSocketBLIPTransport.feed(inbound, to: connection, maximumFrameSize: 1 << 20)
/// ```
public struct WebSocketBLIPTransport: BLIPTransport {
    /// The socket's sending side.
    public let outbound: WebSocketOutboundWriter

    /// A transport writing to `outbound`.
    public init(outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
    }

    public func send(_ frame: ByteBuffer) async throws {
        try await outbound.write(.binary(frame))
    }

    public func close(code: Int, reason: String) async {
        switch code {
        case 1000: try? await outbound.close(.normalClosure, reason: reason)
        case 1002: try? await outbound.close(.protocolError, reason: reason)
        case 1003: try? await outbound.close(.unacceptableData, reason: reason)
        default: try? await outbound.close(.unknown(UInt16(clamping: code)), reason: reason)
        }
    }

    /// Hands every binary message of `inbound` to `connection` as one frame until the socket closes; a text message
    /// closes it with code 1003 (BLIP frames are binary). Tells the connection its transport closed before returning.
    ///
    /// - Returns: The error that ended the socket, nil when it closed normally.
    @discardableResult
    public func feed(
        _ inbound: WebSocketInboundStream, to connection: BLIPConnection, maximumFrameSize: Int
    ) async -> (any Error)? {
        var failure: (any Error)?
        do {
            for try await message in inbound.messages(maxSize: maximumFrameSize) {
                guard case .binary(let frame) = message else {
                    await close(code: 1003, reason: "BLIP frames are binary")
                    break
                }
                await connection.receive(frame)
            }
        } catch {
            failure = error
        }
        await connection.transportClosed()
        return failure
    }
}
