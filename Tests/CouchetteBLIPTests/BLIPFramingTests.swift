import NIOCore
import Testing

@testable import CouchetteBLIP

/// BLIP's varints, checksums, properties and frames against the spec's vectors (blip-sync-protocol.md §5, §6).
@Suite(.timeLimit(.minutes(1))) struct BLIPFramingTests {
    @Test(arguments: [
        (UInt64(0), "00"), (1, "01"), (127, "7f"), (128, "80 01"), (255, "ff 01"), (300, "ac 02"), (16383, "ff 7f"),
        (16384, "80 80 01"), (50000, "d0 86 03"), (128_000, "80 e8 07"), (4_294_967_295, "ff ff ff ff 0f"),
        (UInt64(1) << 63, "80 80 80 80 80 80 80 80 80 01"), (UInt64.max, "ff ff ff ff ff ff ff ff ff 01"),
    ])
    func varints(value: UInt64, hex: String) throws {
        var buffer = ByteBuffer()
        BLIPVarint.write(value, to: &buffer)
        #expect(Array(buffer.readableBytesView) == BLIPTestVectors.bytes(hex))
        #expect(BLIPVarint.length(of: value) == buffer.readableBytes)
        #expect(try BLIPVarint.read(from: &buffer) == value)
        #expect(buffer.readableBytes == 0)
    }

    @Test func truncatedOrOverlongVarintsAreFatal() throws {
        for hex in ["", "80", "ff ff", "ff ff ff ff ff ff ff ff ff ff 01", "ff ff ff ff ff ff ff ff ff 02"] {
            var buffer = BLIPTestVectors.buffer(hex)
            #expect(throws: BLIPError.badVarint) { try BLIPVarint.read(from: &buffer) }
            #expect(buffer.readerIndex == 0)
        }
        // A non-minimal form is accepted.
        var buffer = BLIPTestVectors.buffer("81 00")
        #expect(try BLIPVarint.read(from: &buffer) == 1)
    }

    @Test func checksums() {
        var checksum = BLIPChecksum()
        checksum.update(Array("123456789".utf8))
        #expect(checksum.value == 0xCBF4_3926)
        var empty = BLIPChecksum()
        empty.update([0])
        #expect(empty.value == 0xD202_EF8D)
        // §5.3's payload alone, and continued from §5.1's.
        let subChanges = Array(BLIPTestVectors.bytes(BLIPTestVectors.subChanges).dropFirst(2).dropLast(4))
        var alone = BLIPChecksum()
        alone.update(subChanges)
        #expect(alone.value == 0x75C4_FB63)
        var continued = BLIPChecksum(value: 0x5575_197F)
        continued.update(subChanges)
        #expect(continued.value == 0xB078_1611)
    }

    @Test func theClientsFirstFramesAreWrittenAsTheSpecShows() throws {
        let writer = BLIPFrameWriter()
        var getCheckpoint = try BLIPOutgoingMessage(
            .request(number: 1, properties: ["Profile": "getCheckpoint", "client": "cp-abc"]))
        let first = try writer.nextFrame(of: &getCheckpoint, maximumSize: 4096)
        #expect(Array(first.readableBytesView) == BLIPTestVectors.bytes(BLIPTestVectors.getCheckpoint))
        #expect(getCheckpoint.isFinished)
        #expect(getCheckpoint.bytesSent == 41)  // payload and checksum: what the peer's ACKs count
        var subChanges = try BLIPOutgoingMessage(
            .request(
                number: 2,
                properties: [
                    "Profile": "subChanges", "batch": "200", "versioning": "rev-trees", "activeOnly": "true",
                    "revocations": "true",
                ]))
        let second = try writer.nextFrame(of: &subChanges, maximumSize: 4096)
        #expect(Array(second.readableBytesView) == BLIPTestVectors.bytes(BLIPTestVectors.subChanges))
        #expect(throws: BLIPError.self) { try writer.nextFrame(of: &subChanges, maximumSize: 4096) }
    }

    @Test func theServersRepliesAreWrittenAsTheSpecShows() throws {
        let request = BLIPMessage.request(number: 1, properties: ["Profile": "getCheckpoint", "client": "cp-abc"])
        var reply = try BLIPOutgoingMessage(request.reply(properties: ["rev": "0-1"], body: Array(#"{"remote":2}"#.utf8)))
        let replyFrame = try BLIPFrameWriter().nextFrame(of: &reply, maximumSize: 4096)
        #expect(Array(replyFrame.readableBytesView) == BLIPTestVectors.bytes(BLIPTestVectors.checkpointReply))
        var missing = try BLIPOutgoingMessage(request.errorReply(domain: "HTTP", code: 404, message: "missing"))
        let missingFrame = try BLIPFrameWriter().nextFrame(of: &missing, maximumSize: 4096)
        #expect(Array(missingFrame.readableBytesView) == BLIPTestVectors.bytes(BLIPTestVectors.checkpointMissing))
        var empty = try BLIPOutgoingMessage(BLIPMessage.request(number: 7, properties: ["Profile": "x"]).reply())
        let emptyFrame = try BLIPFrameWriter().nextFrame(of: &empty, maximumSize: 4096)
        #expect(Array(emptyFrame.readableBytesView) == BLIPTestVectors.bytes("07 01 00 d2 02 ef 8d"))
    }

    @Test func acknowledgementFrames() throws {
        let frame = BLIPFrameWriter.acknowledgement(ofResponse: false, number: 3, bytesReceived: 50_000)
        #expect(Array(frame.readableBytesView) == BLIPTestVectors.bytes("03 34 d0 86 03"))
        #expect(try BLIPFrameReader().read(frame) == [.acknowledged(ofResponse: false, number: 3, bytes: 50_000)])
    }

    @Test func theClientsFramesAreReadIncludingTheCompressedOne() throws {
        let reader = BLIPFrameReader()
        let first = try reader.read(BLIPTestVectors.buffer(BLIPTestVectors.getCheckpoint))
        #expect(first == [.message(.request(number: 1, properties: ["Profile": "getCheckpoint", "client": "cp-abc"]))])
        let second = try reader.read(BLIPTestVectors.buffer(BLIPTestVectors.subChanges))
        guard case .message(let subChanges) = second.first else {
            Issue.record("no message: \(second)")
            return
        }
        #expect(subChanges.profile == "subChanges")
        #expect(subChanges.properties["versioning"] == "rev-trees")
        #expect(reader.checksumValue == 0xB078_1611)
        let third = try reader.read(BLIPTestVectors.buffer(BLIPTestVectors.compressedChangesReply))
        #expect(
            third == [
                .message(
                    BLIPMessage(
                        type: .response, number: 1, properties: ["maxHistory": "20", "blobs": "true", "deltas": "true"],
                        body: Array("[[],[]]".utf8), isCompressed: true))
            ])
        #expect(reader.checksumValue == 0x639C_1C0D)
    }

    @Test func theServersFramesAreRead() throws {
        let reply = try BLIPFrameReader().read(BLIPTestVectors.buffer(BLIPTestVectors.checkpointReply))
        #expect(reply == [.message(BLIPMessage(type: .response, number: 1, properties: ["rev": "0-1"], body: Array(#"{"remote":2}"#.utf8)))])
        let missing = try BLIPFrameReader().read(BLIPTestVectors.buffer(BLIPTestVectors.checkpointMissing))
        guard case .message(let error) = missing.first else {
            Issue.record("no message: \(missing)")
            return
        }
        #expect(error.error?.domain == "HTTP")
        #expect(error.error?.code == 404)
        #expect(error.error?.message == "missing")
    }

    @Test func aCorruptChecksumOrTruncatedFrameIsFatal() {
        var corrupt = BLIPTestVectors.bytes(BLIPTestVectors.getCheckpoint)
        corrupt[corrupt.count - 1] ^= 0x01
        #expect(throws: BLIPError.checksumMismatch(expected: 0x5575_197F, found: 0x5575_197E)) {
            try BLIPFrameReader().read(ByteBuffer(bytes: corrupt))
        }
        #expect(BLIPError.checksumMismatch(expected: 0, found: 1).isFatal)
        for hex in ["", "01", "01 00", "01 00 00 d2 02"] {
            #expect(throws: BLIPError.self) { try BLIPFrameReader().read(BLIPTestVectors.buffer(hex)) }
        }
        // A checksum that would be right for the frame alone is wrong on a connection's second frame.
        let reader = BLIPFrameReader()
        let emptyRequest = BLIPTestVectors.buffer("01 00 00 d2 02 ef 8d")
        #expect(throws: Never.self) { try reader.read(emptyRequest) }
        #expect(throws: BLIPError.self) { try reader.read(BLIPTestVectors.buffer("02 00 00 d2 02 ef 8d")) }
    }

    @Test func compressedDataTheInflaterRefusesIsFatal() {
        // Flags 0x08 (compressed): a payload of bytes that are no deflate stream, with some checksum.
        #expect(throws: BLIPError.badCompressedData) {
            try BLIPFrameReader().read(BLIPTestVectors.buffer("01 08 ff ff ff ff ff 00 00 00 00"))
        }
    }

    @Test func unreadablePropertiesFailTheMessageNotTheConnection() throws {
        let reader = BLIPFrameReader()
        // Properties "a\0" (one string, no value) in request #1; then a good request #2 on the same connection.
        var payload: [UInt8] = [2, 0x61, 0]
        var checksum = BLIPChecksum()
        checksum.update(payload)
        var frame = ByteBuffer(bytes: [1, 0] + payload)
        frame.writeInteger(checksum.value, endianness: .big)
        let events = try reader.read(frame)
        #expect(events == [.badMessage(type: .request, number: 1, error: .badProperties("a key has no value"))])
        payload = [0]
        checksum.update(payload)
        frame = ByteBuffer(bytes: [2, 0] + payload)
        frame.writeInteger(checksum.value, endianness: .big)
        #expect(try reader.read(frame) == [.message(BLIPMessage(type: .request, number: 2))])
        // A frame of a request number already finished is dropped.
        checksum.update(payload)
        frame = ByteBuffer(bytes: [2, 0] + payload)
        frame.writeInteger(checksum.value, endianness: .big)
        #expect(try reader.read(frame) == [])
    }

    @Test func propertiesRefuseNULsAndOversizedBlocks() {
        #expect(throws: BLIPError.self) { try BLIPProperties([("a\u{0}b", "c")]).encoded() }
        #expect(throws: BLIPError.propertiesTooLarge(BLIPProperties.maximumSize + 2)) {
            try BLIPProperties(decoding: [UInt8](repeating: 0x61, count: BLIPProperties.maximumSize + 1) + [0])
        }
        #expect(throws: BLIPError.self) { try BLIPProperties(decoding: [0x61, 0x00, 0xff, 0x00]) }
        #expect(throws: BLIPError.self) { try BLIPProperties(decoding: [0x61, 0x00, 0x62]) }
    }
}
