import NIOCore

/// Bytes from the spec's worked example and test vectors (blip-sync-protocol.md §5, §6).
enum BLIPTestVectors {
    /// Hex with spaces and newlines to bytes.
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = hex.filter(\.isHexDigit)
        return stride(from: 0, to: digits.count, by: 2).map { offset in
            let start = digits.index(digits.startIndex, offsetBy: offset)
            return UInt8(digits[start..<digits.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static func buffer(_ hex: String) -> ByteBuffer { ByteBuffer(bytes: bytes(hex)) }

    /// §5.1: `MSG #1 getCheckpoint client=cp-abc`, the client's first frame.
    static let getCheckpoint = """
        01 00 24 50 72 6f 66 69 6c 65 00 67 65 74 43 68 65 63 6b 70 6f 69 6e 74 00
        63 6c 69 65 6e 74 00 63 70 2d 61 62 63 00 55 75 19 7f
        """

    /// §5.2: `RPY #1 rev=0-1 {"remote":2}`, the server's first frame.
    static let checkpointReply = """
        01 01 08 72 65 76 00 30 2d 31 00 7b 22 72 65 6d 6f 74 65 22 3a 32 7d 38 f0 90 9c
        """

    /// §5.2: `ERR #1 HTTP/404 missing`, the server's first frame.
    static let checkpointMissing = """
        01 02 21 45 72 72 6f 72 2d 43 6f 64 65 00 34 30 34 00 45 72 72 6f 72 2d 44 6f 6d 61 69 6e 00
        48 54 54 50 00 6d 69 73 73 69 6e 67 ec 76 bd f0
        """

    /// §5.3: `MSG #2 subChanges …`, the client's second frame (checksum continued from §5.1).
    static let subChanges = """
        02 00 53 50 72 6f 66 69 6c 65 00 73 75 62 43 68 61 6e 67 65 73 00 62 61 74 63 68 00 32 30 30 00
        76 65 72 73 69 6f 6e 69 6e 67 00 72 65 76 2d 74 72 65 65 73 00 61 63 74 69 76 65 4f 6e 6c 79 00
        74 72 75 65 00 72 65 76 6f 63 61 74 69 6f 6e 73 00 74 72 75 65 00 b0 78 16 11
        """

    /// §5.4: the compressed `RPY #1` to a `changes`, the client's third frame.
    static let compressedChangesReply = """
        01 09 52 cd 4d ac f0 c8 2c 2e c9 2f aa 64 30 32 60 48 ca c9 4f 2a 66 28 29 2a 4d 65 48 49 cd 29
        49 84 b2 a3 a3 63 75 a2 63 63 01 00 63 9c 1c 0d
        """
}
