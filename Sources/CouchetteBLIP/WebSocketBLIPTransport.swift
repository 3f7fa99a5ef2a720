import NIOCore
import NIOWebSocket
import WSCore

// MARK: - WebSocketBLIPTransport

/// A ``BLIPConnection``'s frames over a WebSocket: one binary message per frame (spec: blip-sync-protocol.md §1.5).
/// The gateway's upgraded connections and the replicator's client sockets both use it.
///
/// Given the upgraded connection's NIO channel (a server's upgrade handler has it), frames ready together are written
/// to it with one flush — one socket write for a batch of `rev`s where the WebSocket writer would flush each frame on
/// its own — and each write is awaited until the socket took it, which holds the sender back when the peer reads
/// slowly. Without it, each frame goes through the WebSocket writer.
///
/// ```swift
/// let connection = BLIPConnection(transport: WebSocketBLIPTransport(outbound: outbound), handler: handle)
/// await WebSocketBLIPTransport.feed(inbound, to: connection, maximumFrameSize: 1 << 20)
/// ```
public struct WebSocketBLIPTransport: BLIPTransport {
    /// The socket's sending side.
    public let outbound: WebSocketOutboundWriter
    /// The upgraded connection's channel, written to directly when set.
    public let channel: (any Channel)?

    /// A transport writing to `outbound`, or straight to `channel` (a server-side connection, whose frames are not
    /// masked) when given.
    public init(outbound: WebSocketOutboundWriter, channel: (any Channel)? = nil) {
        self.outbound = outbound
        self.channel = channel
    }

    public func send(_ frame: ByteBuffer) async throws {
        try await send(contentsOf: [frame])
    }

    public func send(contentsOf frames: [ByteBuffer]) async throws {
        guard let channel, !frames.isEmpty else {
            for frame in frames { try await outbound.write(.binary(frame)) }
            return
        }
        let messages = frames.map { WebSocketFrame(fin: true, opcode: .binary, data: $0) }
        try await channel.eventLoop.flatSubmit {
            for message in messages.dropLast() { channel.write(NIOAny(message), promise: nil) }
            return channel.writeAndFlush(NIOAny(messages[messages.count - 1]))
        }.get()
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
