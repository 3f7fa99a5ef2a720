import CouchetteCore
import CouchetteTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct JSONWriterTests {
    /// Writes `value` piece by piece, as an encoder with a known structure does.
    static func write(_ value: JSONValue, to writer: inout JSONWriter) {
        switch value {
        case .null: writer.null()
        case .bool(let flag): writer.bool(flag)
        case .int(let number): writer.int(number)
        case .double(let number): writer.double(number)
        case .string(let string): writer.string(string)
        case .array(let elements):
            writer.beginArray()
            for element in elements { write(element, to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for (key, member) in members {
                writer.key(key)
                write(member, to: &writer)
            }
            writer.endObject()
        }
    }

    @Test("Text written piece by piece parses back to the value", arguments: 0..<40)
    func piecewiseTextParsesBack(seed: UInt64) throws {
        var generator = SplitMix64(state: seed)
        let value = RandomJSON.value(&generator, depth: 0, names: ["a", "é", "\"q\"", "", "k\n"])
        var writer = JSONWriter()
        Self.write(value, to: &writer)
        #expect(try JSONValue(parsing: writer.bytes) == value)
    }

    @Test func commasAndColonsGoWhereTheyBelong() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("history")
        writer.beginArray()
        writer.string("1-abc")
        writer.int(-1)
        writer.beginArray()
        writer.endArray()
        writer.value(["x": [1, 2]])
        writer.endArray()
        writer.key("exp")
        writer.double(1.5)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"history":["1-abc",-1,[],{"x":[1,2]}],"exp":1.5}"#)
    }
}
