/// A small seeded random number generator (SplitMix64), so property tests are reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes, each masked with `mask` (`0b11` for values 0...3), eight from each step: in a debug
    /// build this is two orders of magnitude faster than `UInt8.random(in:using:)` per byte, which made large
    /// random bodies the slowest part of the tests that use them.
    public mutating func bytes(_ count: Int, mask: UInt8 = 0xFF) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                var word = next()
                for _ in 0..<min(8, count - offset) {
                    buffer[offset] = UInt8(truncatingIfNeeded: word) & mask
                    word >>= 8
                    offset += 1
                }
            }
        }
        return bytes
    }
}
