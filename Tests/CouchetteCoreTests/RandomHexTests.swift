import Testing

@testable import CouchetteCore

@Suite("Random hex identifiers", .timeLimit(.minutes(1)))
struct RandomHexTests {
    @Test(
        "Two hex digits per byte, lower-case, for lengths around the generator's 8-byte words",
        arguments: [0, 1, 7, 8, 9, 16, 20, 33])
    func shape(bytes: Int) {
        let text = RandomHex.make(bytes: bytes)
        let digits = Set("0123456789abcdef".utf8)
        #expect(text.utf8.count == 2 * bytes)
        #expect(text.utf8.allSatisfy(digits.contains))
    }

    @Test("IDs do not repeat, and every byte position varies (no byte left unfilled)")
    func random() {
        let ids = (0..<2_000).map { _ in RandomHex.make(bytes: 20) }
        #expect(Set(ids).count == ids.count)
        for position in stride(from: 0, to: 40, by: 2) {
            let pairs = Set(ids.map { Array($0.utf8)[position..<position + 2] })
            #expect(pairs.count > 100, "byte \(position / 2) takes only \(pairs.count) values")
        }
    }
}
