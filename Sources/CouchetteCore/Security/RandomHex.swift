// MARK: - RandomHex

/// Random identifiers as lower-case hexadecimal text, from `SystemRandomNumberGenerator` (the kernel's CSPRNG).
///
/// One place for every random ID the system makes — document IDs Sync Gateway-style, session IDs, multipart
/// boundaries:
///
/// ```swift
/// let id = RandomHex.make(bytes: 16)  // "3f9c0a…", 32 characters
/// ```
///
/// Foundation's `UUID()` opens, reads and closes `/dev/urandom` on Linux for each ID; the generator asks the kernel
/// with one `getrandom` call per 8 bytes.
public enum RandomHex {
    /// `bytes` random bytes as `2 × bytes` lower-case hexadecimal characters.
    public static func make(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<min(8, count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return RevisionID.hexString(bytes)
    }
}
