import Crypto
import Foundation
import Testing

@testable import Couchette

// MARK: - BlobCipherTests

/// The encrypted attachment format against encryption-format.md §4's vector, and every tampering it must catch.
@Suite(.timeLimit(.minutes(5))) struct BlobCipherTests {
    static func bytes(_ hex: String) -> Data {
        Data(stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        })
    }

    static func hex(_ data: some Sequence<UInt8>) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// V1's K_enc.
    static let databaseKey = bytes("3b25f3209444ac088a3eef4df6f7380c95c35645a44c623dfa8ef675d441da67")
    static let salt = Data(0x20...0x3f)
    static let content = Data((0..<5000).map { UInt8($0 % 251) })

    @Test func theSpecVector() throws {
        let cipher = BlobCipher(databaseKey: Self.databaseKey)
        #expect(Self.hex(cipher.blobKey.withUnsafeBytes { Data($0) })
            == "b722a2ec4bc6cba8a1d86c40131585b2fa998642520ab53df63041cfc8c6f028")
        #expect(Self.hex(cipher.keyID) == "40c0c0a26e2e72cf416a28b053283353")
        let (fileKey, nonceBase) = cipher.fileKeys(salt: Self.salt)
        #expect(Self.hex(fileKey.withUnsafeBytes { Data($0) })
            == "dd15a557abc74a9ba2aa94d3c862e2b6430e592e5d68a93dbe3ea641940f660a")
        #expect(Self.hex(nonceBase) == "48af867ec1b6adbb09260f85")
        #expect(Self.hex(BlobCipher.nonce(nonceBase, 1)).hasSuffix("0f84"))

        let file = try cipher.seal(Self.content, salt: Self.salt, chunkSizeLog2: 12)
        #expect(Self.hex(file.prefix(8)) == "45424c4201010c00")
        #expect(file.count == 5096)
        #expect(Self.hex(file[(64 + 4096)..<(64 + 4112)]) == "df0501a1dfa8ed08b30f35661e2ec0b3")
        #expect(Self.hex(file.suffix(16)) == "4a26b17306dff793ea7db81ec51e0495")
        #expect(Self.hex(SHA256.hash(data: file)) == "4da87ef39b392cb6e6447f350f86d09666c4a1f1ae5b4e519aa295c66719a7a6")
        #expect(try cipher.open(file) == Self.content)

        let empty = try cipher.seal(Data(), salt: Self.salt, chunkSizeLog2: 12)
        #expect(empty.count == 80)
        #expect(Self.hex(empty.suffix(16)) == "556a8ade2b4411fe9b3cc2a2d412e548")
        #expect(try cipher.open(empty).isEmpty)
    }

    @Test func tamperingIsCaught() throws {
        let cipher = BlobCipher(databaseKey: Self.databaseKey)
        let file = try cipher.seal(Self.content + Self.content, salt: Self.salt, chunkSizeLog2: 12)  // 3 chunks
        let chunk = 4096 + 16
        var headerFlip = file
        headerFlip[30] ^= 1  // the salt: every chunk's additional data changes
        var bodyFlip = file
        bodyFlip[64 + 100] ^= 1
        let dropLast = file.prefix(64 + 2 * chunk)  // ends on a full chunk sealed as not last
        let swapped = file.prefix(64) + file[(64 + chunk)..<(64 + 2 * chunk)] + file[64..<(64 + chunk)]
            + file.suffix(from: 64 + 2 * chunk)
        let appended = file + file.suffix(16)
        for (name, bad) in [("header", headerFlip), ("body", bodyFlip), ("truncated", Data(dropLast)),
                            ("swapped", Data(swapped)), ("appended", appended)] {
            let error = #expect(throws: CouchetteError.self, "\(name)") { _ = try cipher.open(bad) }
            #expect(error?.code == .corrupt, "\(name)")
        }
        let otherKey = BlobCipher(databaseKey: Data(repeating: 7, count: 32))
        let error = #expect(throws: CouchetteError.self) { _ = try otherKey.open(file) }
        #expect(error?.code == .wrongEncryptionKey)
    }
}
