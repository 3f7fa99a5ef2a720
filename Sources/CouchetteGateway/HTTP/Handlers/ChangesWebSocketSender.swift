import CompressNIO
import HummingbirdWebSocket
import NIOCore

// MARK: - ChangesWebSocketSender

/// Writes a WebSocket feed's messages: as text, or with `accept_encoding=gzip` as binary flushes of one gzip
/// stream for messages longer than 8 bytes (spec: gateway-rest-api.md §11.4).
///
/// ```swift
/// var sender = ChangesWebSocketSender(outbound: outbound, gzip: true)
/// try await sender.send(Array(#"[{"seq":1,…}]"#.utf8))  // binary: gzip header + deflate sync flush
/// try await sender.send(Array("[]".utf8))                // text "[]"
/// ```
struct ChangesWebSocketSender {
    /// The socket's writer.
    let outbound: WebSocketOutboundWriter

    /// The gzip stream, when compressing.
    private let compressor: (any NIOCompressor)?

    /// Messages this long or shorter are always sent as text.
    static let uncompressedSizeLimit = 8

    /// Creates a sender; with `gzip` it starts the gzip stream.
    init(outbound: WebSocketOutboundWriter, gzip: Bool) {
        self.outbound = outbound
        if gzip {
            let compressor = CompressionAlgorithm.gzip().compressor
            self.compressor = (try? compressor.startStream()) == nil ? nil : compressor
        } else {
            self.compressor = nil
        }
    }

    /// Sends one message.
    mutating func send(_ message: [UInt8]) async throws {
        guard let compressor, message.count > Self.uncompressedSizeLimit else {
            try await outbound.writeTextMessage(String(decoding: message, as: UTF8.self))
            return
        }
        var input = ByteBuffer(bytes: message)
        var output = ByteBuffer()
        output.reserveCapacity(compressor.maxSize(from: input) + 64)
        while true {
            do {
                try input.compressStream(to: &output, with: compressor, flush: .sync)
                break
            } catch let error as CompressNIOError where error == .bufferOverflow {
                output.reserveCapacity(output.capacity * 2)
            }
        }
        try await outbound.writeBinaryMessage(output)
    }
}
