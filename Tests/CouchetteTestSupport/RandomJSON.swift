import CouchetteCore

/// Random JSON values for property tests: small numbers, strings made of JSON's special characters, arrays and
/// objects nested a few levels, member names from a given list.
public enum RandomJSON {
    public static func value(_ generator: inout SplitMix64, depth: Int, names: [String]) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 8 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -1_000...1_000, using: &generator))
        case 3: return .double(Double(Int.random(in: -30...30, using: &generator)) / 4)
        case 4, 5:
            let pieces = ["a", "{", "]", "\"", "\\", ",", ":", "é", " ", "\n"]
            return .string(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        case 6:
            return .array(
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in value(&generator, depth: depth + 1, names: names) })
        default:
            return object(&generator, depth: depth, names: names)
        }
    }

    /// A random object.
    public static func object(_ generator: inout SplitMix64, depth: Int, names: [String]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &generator) {
            members[names.randomElement(using: &generator)!] = value(&generator, depth: depth + 1, names: names)
        }
        return .object(members)
    }
}
