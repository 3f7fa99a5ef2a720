// MARK: - BLIPProperties

/// A message's properties: string keys and values in the order they were written (spec: blip-sync-protocol.md
/// §2.5). On the wire they are `key NUL value NUL …`, preceded by their length as a varint.
///
/// ```swift
/// var properties: BLIPProperties = ["Profile": "getCheckpoint", "client": "cp-abc"]
/// properties["rev"] = "0-1"
/// properties["Profile"]  // "getCheckpoint"
/// ```
public struct BLIPProperties: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// The pairs, in order (keys are unique).
    public private(set) var pairs: [(key: String, value: String)]

    /// LiteCore's limit on the encoded properties of one message (`kMaxPropertiesSize`), which Couchette applies too.
    public static let maximumSize = 100 * 1024

    /// No properties.
    public init() {
        pairs = []
    }

    /// Properties from pairs in order; a repeated key keeps its last value, in its first place.
    public init(_ pairs: [(String, String)]) {
        self.pairs = []
        for (key, value) in pairs { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Whether a Boolean property is set: `true` or `1`, as LiteCore writes them.
    public func flag(_ key: String) -> Bool {
        let value = self[key]
        return value == "true" || value == "1"
    }

    /// A property's value; setting nil removes it, setting a new key appends it.
    public subscript(key: String) -> String? {
        get { pairs.first { $0.key == key }?.value }
        set {
            if let index = pairs.firstIndex(where: { $0.key == key }) {
                if let newValue { pairs[index].value = newValue } else { pairs.remove(at: index) }
            } else if let newValue {
                pairs.append((key, newValue))
            }
        }
    }

    /// Whether there are none.
    public var isEmpty: Bool { pairs.isEmpty }

    public func makeIterator() -> IndexingIterator<[(key: String, value: String)]> {
        pairs.makeIterator()
    }

    public static func == (lhs: BLIPProperties, rhs: BLIPProperties) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }

    // MARK: - Encoding

    /// The encoded block, without its length: `key NUL value NUL …`.
    ///
    /// - Throws: ``BLIPError/badProperties(_:)`` for a key or value holding a NUL.
    public func encoded() throws(BLIPError) -> [UInt8] {
        var bytes: [UInt8] = []
        for (key, value) in pairs {
            guard !key.utf8.contains(0), !value.utf8.contains(0) else {
                throw .badProperties("a property holds a NUL character")
            }
            bytes += key.utf8
            bytes.append(0)
            bytes += value.utf8
            bytes.append(0)
        }
        return bytes
    }

    /// Reads an encoded block (without its length).
    ///
    /// - Throws: ``BLIPError/badProperties(_:)`` for a block not ending in NUL, an odd number of strings or bad
    ///   UTF-8; ``BLIPError/propertiesTooLarge(_:)`` over ``maximumSize``.
    public init(decoding bytes: some BidirectionalCollection<UInt8>) throws(BLIPError) {
        guard bytes.count <= Self.maximumSize else { throw .propertiesTooLarge(bytes.count) }
        self.init()
        guard !bytes.isEmpty else { return }
        guard bytes.last == 0 else { throw .badProperties("the block does not end with NUL") }
        let strings = bytes.dropLast().split(separator: 0, omittingEmptySubsequences: false)
        guard strings.count % 2 == 0 else { throw .badProperties("a key has no value") }
        var decoded: [(String, String)] = []
        var index = strings.startIndex
        while index < strings.endIndex {
            guard let key = String(validating: strings[index], as: UTF8.self),
                let value = String(validating: strings[index + 1], as: UTF8.self)
            else { throw .badProperties("invalid UTF-8") }
            decoded.append((key, value))
            index += 2
        }
        self.init(decoded)
    }
}
