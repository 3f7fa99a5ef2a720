import CouchetteCore
import CouchetteTestSupport
import Testing

/// Serialized objects list their keys in Unicode code point order (UTF-8 byte order), whatever the keys' lengths and
/// shared prefixes (the comparison changes method past 32 bytes).
@Suite(.timeLimit(.minutes(2))) struct KeyOrderPropertyTests {
    @Test("Keys come out in UTF-8 byte order: short, long, shared prefixes, non-ASCII")
    func keysInByteOrder() throws {
        var random = SplitMix64(state: 0x5EED_0F_0DE2)
        let alphabet: [String] = ["a", "b", "p", "0", "9", "é", "ß", "€", "😀", "Z", "_"]
        for _ in 0..<300 {
            let prefix = String(repeating: "k", count: Int(random.next() % 48))
            var members: [String: JSONValue] = [:]
            for index in 0..<Int(1 + random.next() % 40) {
                let tail = (0..<Int(random.next() % 6)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
                let key = (random.next() % 2 == 0 ? prefix : "") + tail.joined()
                members[key] = .int(Int64(index))
            }
            let text = JSONValue.object(members).serializedString()
            let parsed = try #require(try JSONValue(parsing: Array(text.utf8)).objectValue)
            #expect(parsed == members)
            let written = JSONValue.object(members).serialized()
            let expectedOrder = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            let expected = JSONValue.object(Dictionary(uniqueKeysWithValues: expectedOrder.map { ($0, members[$0]!) }))
                .serialized()
            #expect(written == expected)
            // The keys appear in the text in that order.
            var position = text.startIndex
            for key in expectedOrder {
                let quoted = JSONValue.string(key).serializedString() + ":"
                let found = try #require(text.range(of: quoted, range: position..<text.endIndex), "\(key)")
                position = found.upperBound
            }
        }
    }
}
