import CouchetteBLIP
import NIOCore

/// Two ``BLIPConnection``s joined in memory like a socket: each side's frames arrive at the other in order, through
/// a stream read by a task of its own; closing one side ends the other's.
final class MemoryPipe: Sendable {
    /// One direction's transport: sends into the peer's stream.
    struct End: BLIPTransport {
        let outgoing: AsyncStream<ByteBuffer>.Continuation
        let closes: AsyncStream<Int>.Continuation

        func send(_ frame: ByteBuffer) async throws {
            guard case .enqueued = outgoing.yield(frame) else { throw BLIPError.protocolViolation("pipe closed") }
        }

        func close(code: Int, reason: String) async {
            closes.yield(code)
            outgoing.finish()
        }
    }

    let client: BLIPConnection
    let server: BLIPConnection
    /// The close codes each side's connection closed with, in order.
    let clientCloses: AsyncStream<Int>
    let serverCloses: AsyncStream<Int>
    private let readers: [Task<Void, Never>]

    init(client clientHandler: @escaping BLIPConnection.RequestHandler, server serverHandler: @escaping BLIPConnection.RequestHandler) {
        let (toServer, toServerContinuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        let (toClient, toClientContinuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        let (clientCloses, clientClosesContinuation) = AsyncStream.makeStream(of: Int.self)
        let (serverCloses, serverClosesContinuation) = AsyncStream.makeStream(of: Int.self)
        let client = BLIPConnection(
            transport: End(outgoing: toServerContinuation, closes: clientClosesContinuation), handler: clientHandler)
        let server = BLIPConnection(
            transport: End(outgoing: toClientContinuation, closes: serverClosesContinuation), handler: serverHandler)
        self.client = client
        self.server = server
        self.clientCloses = clientCloses
        self.serverCloses = serverCloses
        readers = [
            Task {
                for await frame in toServer { await server.receive(frame) }
                await server.transportClosed()
            },
            Task {
                for await frame in toClient { await client.receive(frame) }
                await client.transportClosed()
            },
        ]
    }

    /// Sends raw bytes to the server as if the client had framed them.
    func injectIntoServer(_ frame: ByteBuffer) async {
        await server.receive(frame)
    }

    deinit {
        for reader in readers { reader.cancel() }
    }
}
