import NIOCore

// MARK: - BLIPTransport

/// What carries a ``BLIPConnection``'s frames: one binary WebSocket message per frame, in order (spec:
/// blip-sync-protocol.md §1.5). The gateway's passive side and the replicator's active side each adapt their WebSocket.
public protocol BLIPTransport: Sendable {
    /// Sends one frame; returns once the transport took it (waiting while its buffers are full).
    func send(_ frame: ByteBuffer) async throws

    /// Sends frames in order, at once where the transport can (one socket write for them all); returns once the
    /// transport took them. By default one ``send(_:)`` each.
    func send(contentsOf frames: [ByteBuffer]) async throws

    /// Closes the connection with a WebSocket close code (1000 normal, 1002 protocol error) and a reason.
    func close(code: Int, reason: String) async
}

extension BLIPTransport {
    public func send(contentsOf frames: [ByteBuffer]) async throws {
        for frame in frames { try await send(frame) }
    }
}
