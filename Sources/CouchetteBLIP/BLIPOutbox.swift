import NIOCore

// MARK: - BLIPOutbox

/// The sending side of a connection: messages wait in one queue and go out a frame at a time, round-robin, urgent
/// ones ahead of normal ones, each paused while too many of its bytes are unacknowledged (spec:
/// blip-sync-protocol.md §2.8, §2.9).
///
/// ```swift
/// let outbox = BLIPOutbox()
/// try outbox.enqueue(.request(number: 1, properties: ["Profile": "changes"], body: json, isUrgent: true))
/// while let frame = try outbox.nextFrame() { send(frame) }
/// // later, from the reader: .acknowledged(ofResponse, number, bytes)
/// outbox.acknowledged(ofResponse: false, number: 1, bytes: 50_000)
/// ```
///
/// Not thread-safe: one connection's sending side owns it.
public final class BLIPOutbox {
    /// Bytes of one message sent but not acknowledged at which it waits for an acknowledgement (`kMaxUnackedBytes`).
    public static let maximumUnacknowledgedBytes: UInt64 = 128_000

    private struct Entry {
        var outgoing: BLIPOutgoingMessage
        var bytesAcknowledged: UInt64 = 0

        var key: BLIPMessageKey { outgoing.message.key }
        var isUrgent: Bool { outgoing.message.isUrgent }
        /// Whether too many bytes are unacknowledged (a peer acknowledging more than was sent counts as all).
        var mustWait: Bool {
            outgoing.bytesSent > bytesAcknowledged
                && outgoing.bytesSent - bytesAcknowledged >= BLIPOutbox.maximumUnacknowledgedBytes
        }
    }

    private let writer: BLIPFrameWriter
    private var queue: [Entry] = []
    /// Messages waiting for an acknowledgement before their next frame.
    private var paused: [BLIPMessageKey: Entry] = [:]
    /// Acknowledgements of messages still sending, by message (kept for messages not paused yet).
    private var acknowledgedBytes: [BLIPMessageKey: UInt64] = [:]

    /// An outbox writing frames with `writer` (the connection's one).
    public init(writer: BLIPFrameWriter = BLIPFrameWriter()) {
        self.writer = writer
    }

    /// Whether no message is queued or paused.
    public var isEmpty: Bool { queue.isEmpty && paused.isEmpty }

    /// How many messages are queued (not counting paused ones).
    public var queuedCount: Int { queue.count }

    /// Queues a message: a normal one at the back; an urgent one after the last urgent one queued, leaving one normal
    /// message between when there is one, and never before a message that has not started when it is new itself
    /// (requests begin in number order).
    ///
    /// - Throws: ``BLIPError`` when its properties cannot be encoded.
    public func enqueue(_ message: BLIPMessage) throws(BLIPError) {
        insert(Entry(outgoing: try BLIPOutgoingMessage(message)))
    }

    private func insert(_ entry: Entry) {
        guard entry.isUrgent, !queue.isEmpty else {
            queue.append(entry)
            return
        }
        let isNew = !entry.outgoing.hasStarted
        var place = queue.count - 1
        while place > 0 {
            if queue[place].isUrgent {
                if place + 1 < queue.count { place += 1 }
                break
            }
            if isNew && !queue[place].outgoing.hasStarted { break }
            place -= 1
        }
        queue.insert(entry, at: place + 1)
    }

    /// The next frame to send, or nil when every queued message is sent or waiting for an acknowledgement. Frames
    /// are 4 KiB while other messages wait, 16 KiB for a message alone (LiteCore's sizes).
    ///
    /// - Throws: ``BLIPError`` when deflating fails.
    public func nextFrame() throws(BLIPError) -> ByteBuffer? {
        guard !queue.isEmpty else { return nil }
        var entry = queue.removeFirst()
        let size = queue.isEmpty ? BLIPFrameWriter.bigFrameSize : BLIPFrameWriter.defaultFrameSize
        let frame = try writer.nextFrame(of: &entry.outgoing, maximumSize: size)
        if entry.outgoing.isFinished {
            acknowledgedBytes[entry.key] = nil
        } else {
            entry.bytesAcknowledged = max(entry.bytesAcknowledged, acknowledgedBytes[entry.key] ?? 0)
            if entry.mustWait {
                paused[entry.key] = entry
            } else {
                queue.append(entry)
            }
        }
        return frame
    }

    /// The peer acknowledged `bytes` of a message this side sends: a paused message under the limit again goes back
    /// in the queue. Acknowledgements of unknown or finished messages are ignored.
    public func acknowledged(ofResponse: Bool, number: UInt64, bytes: UInt64) {
        let key = BLIPMessageKey(isResponse: ofResponse, number: number)
        if var entry = paused[key] {
            entry.bytesAcknowledged = max(entry.bytesAcknowledged, bytes)
            if entry.mustWait {
                paused[key] = entry
            } else {
                paused[key] = nil
                insert(entry)
            }
        } else if queue.contains(where: { $0.key == key }) {
            acknowledgedBytes[key] = max(acknowledgedBytes[key] ?? 0, bytes)
        }
    }
}
