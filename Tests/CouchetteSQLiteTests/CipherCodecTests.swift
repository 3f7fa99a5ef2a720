import CCouchetteCipher
import CSQLite
import Crypto
import Testing

// MARK: - CipherCodecTests

/// The page codec against the known answers of encryption-format.md §1 (V1–V3, computed by a reference
/// implementation that round-trips with SQLCipher 4.12), and tampering.
@Suite(.timeLimit(.minutes(5))) struct CipherCodecTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static let salt = [UInt8](0..<16)

    /// K_enc and K_mac for `secret` of `kind` with ``salt``.
    static func keys(_ kind: cc_key_kind, _ secret: [UInt8]) -> (kenc: [UInt8], kmac: [UInt8]) {
        var kenc = [UInt8](repeating: 0, count: 32)
        var kmac = [UInt8](repeating: 0, count: 32)
        let result = cc_derive_keys(kind, secret, secret.count, salt, &kenc, &kmac)
        #expect(result == SQLITE_OK)
        return (kenc, kmac)
    }

    @Test func v1PassphraseKeys() {
        let (kenc, kmac) = Self.keys(CC_KEY_PASSPHRASE, Array("test".utf8))
        #expect(Self.hex(kenc) == "3b25f3209444ac088a3eef4df6f7380c95c35645a44c623dfa8ef675d441da67")
        #expect(Self.hex(kmac) == "fa4817a631419258a76a97d0343c504f5acc136165e8e19b3283c504bf6581e4")
    }

    @Test func v2RawKeyMACKey() {
        let raw = Self.bytes("2dd29ca851e7b56e4697b0e1f08507293d761a05ce4d1b628663f411a8086d99")
        let (kenc, kmac) = Self.keys(CC_KEY_RAW, raw)
        #expect(kenc == raw)
        #expect(Self.hex(kmac) == "4af27af4b86f9048259f670ca69a156c5f0d44c35b2da4097701704ccd73db6a")
    }

    /// V3: the V1 keys, IV 10…1f, plaintext byte i = 7·i mod 256 (page 1 starting with the SQLite magic).
    @Test(arguments: [
        (UInt32(2), 0, "6ba93ebe5fa4c4968a924c7ad9bec9f9", "f9c936da435378c4529c3d1ae7b046bd",
         "dbddc52e702fbf0f82848f747f47f5af", "0baae7147bef3c65c8b325a08793f52c38c522ea61d3788b7459a5b4ff547656"),
        (UInt32(1), 16, "92ea829ac66abb40a9e3de0e2369b6d5", "dda8f2db8ec9aa6bfca9c4196318e869",
         "bb50b9ef3eb2402938dbda9a20201b3d", "e4c0a2934070ca60efe7d73a976b4d2990aae09a16690fd449bae5f5575a475f"),
    ])
    func v3Pages(page: UInt32, firstCipher: Int, head: String, tail: String, tag: String, digest: String) {
        let (kenc, kmac) = Self.keys(CC_KEY_PASSPHRASE, Array("test".utf8))
        var plaintext = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        if page == 1 { plaintext.replaceSubrange(0..<16, with: Array("SQLite format 3\0".utf8)) }
        let iv = [UInt8](0x10...0x1f)
        var stored = [UInt8](repeating: 0, count: 4096)
        #expect(cc_encrypt_page(kenc, kmac, page, Self.salt, iv, plaintext, &stored) == SQLITE_OK)
        #expect(Self.hex(stored[firstCipher..<(firstCipher + 16)]) == head)
        #expect(Self.hex(stored[4000..<4016]) == tail)
        #expect(Self.hex(stored[4032..<4048]) == tag)
        #expect(Self.hex(SHA256.hash(data: stored)) == digest)

        var decrypted = [UInt8](repeating: 0, count: 4096)
        #expect(cc_decrypt_page(kenc, kmac, page, stored, &decrypted) == SQLITE_OK)
        #expect(decrypted[16..<4016] == plaintext[16..<4016])

        // Any flipped bit fails the tag: NOTADB on page 1, CORRUPT elsewhere; the same page under another number too.
        let failure = page == 1 ? SQLITE_NOTADB : SQLITE_CORRUPT
        for offset in [firstCipher, 2000, 4020, 4090] {
            var tampered = stored
            tampered[offset] ^= 0x80
            #expect(cc_decrypt_page(kenc, kmac, page, tampered, &decrypted) == failure)
        }
        #expect(cc_decrypt_page(kenc, kmac, page + 1, stored, &decrypted) == SQLITE_CORRUPT)
    }
}
