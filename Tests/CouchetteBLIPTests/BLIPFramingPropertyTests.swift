import CouchetteTestSupport
import NIOCore
import PropertyBased
import Testing

@testable import CouchetteBLIP

/// Any sequence of messages survives being cut into frames of any size, interleaved, compressed or not, and
/// reassembled by a reader of the same connection (blip-sync-protocol.md §2).
@Suite(.timeLimit(.minutes(2))) struct BLIPFramingPropertyTests {
    @Test func messagesSurviveFramingCompressionAndInterleaving() async {
        await propertyCheck(count: 150, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let messages = (0..<Int.random(in: 1...8, using: &random)).map { index in
                Self.randomMessage(number: UInt64(index + 1), using: &random)
            }
            let writer = BLIPFrameWriter()
            let reader = BLIPFrameReader()
            var queue = try messages.map { message throws(BLIPError) in try BLIPOutgoingMessage(message) }
            var received: [BLIPMessage] = []
            var acknowledgements = 0
            // Round-robin: the head message sends one frame and goes to the back while it has more.
            while !queue.isEmpty {
                var outgoing = queue.removeFirst()
                let size = [16, 40, 200, 4096, 16384].randomElement(using: &random)!
                let frame = try writer.nextFrame(of: &outgoing, maximumSize: size)
                for event in try reader.read(frame) {
                    switch event {
                    case .message(let message): received.append(message)
                    case .acknowledgement(let acknowledgement):
                        acknowledgements += 1
                        #expect(try BLIPFrameReader().read(acknowledgement).count == 1)
                    case .acknowledged, .badMessage: Issue.record("unexpected \(event)")
                    }
                }
                if !outgoing.isFinished { queue.append(outgoing) }
            }
            #expect(received.sorted { $0.number < $1.number } == messages)
            #expect(reader.checksumValue == writer.checksumValue)
            #expect(reader.partialMessageCount == 0)
            if messages.contains(where: { $0.body.count > 200_000 && !$0.isCompressed }) { #expect(acknowledgements > 0) }
        }
    }

    private static func randomMessage(number: UInt64, using random: inout SplitMix64) -> BLIPMessage {
        var properties = BLIPProperties()
        for index in 0..<Int.random(in: 0...4, using: &random) {
            let key = ["Profile", "id", "rev", "sequence", "é", "history"][index]
            properties[key] = String(repeating: "x", count: Int.random(in: 0...40, using: &random)) + "\(index)é"
        }
        let size = [0, 1, 10, 1_000, 30_000, 250_000].randomElement(using: &random)!
        let compressible = Bool.random(using: &random)
        let body = compressible ? (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 7) } : random.bytes(size)
        let type: BLIPMessageType = [.request, .response, .error].randomElement(using: &random)!
        return BLIPMessage(
            type: type, number: number, properties: properties, body: body, isUrgent: Bool.random(using: &random),
            isNoReply: type == .request && Bool.random(using: &random), isCompressed: Bool.random(using: &random))
    }
}
