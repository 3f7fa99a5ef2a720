import Foundation
import Testing

@testable import CouchetteGateway
import CouchetteCore

// MARK: - AuthPasswordHasherTests

@Suite("Auth: password hashing and constant-time comparison", .timeLimit(.minutes(5)))
struct AuthPasswordHasherTests {
    let hasher = PasswordHasher(cost: 4)

    @Test("hash/verify round trip with cost 4")
    func roundTrip() throws {
        let hash = try hasher.hash("pass")
        #expect(hash.hasPrefix("$2b$04$"))
        #expect(hash.utf8.count == 60)
        #expect(hasher.verify("pass", against: hash))
        #expect(!hasher.verify("wrong", against: hash))
        #expect(!hasher.verify("Pass", against: hash))
        #expect(!hasher.verify("", against: hash))
    }

    @Test("The default cost is 10")
    func defaultCost() {
        #expect(PasswordHasher().cost == 10)
        #expect(PasswordHasher.defaultCost == 10)
    }

    @Test("An explicit cost is encoded in the hash")
    func explicitCost() throws {
        let hash = try hasher.hash("pass", cost: 5)
        #expect(hash.hasPrefix("$2b$05$"))
        #expect(hasher.verify("pass", against: hash))
        #expect(throws: GatewayError.self) { try hasher.hash("pass", cost: 3) }
    }

    @Test("Each hash has a fresh salt")
    func saltsDiffer() throws {
        let first = try hasher.hash("pass")
        let second = try hasher.hash("pass")
        #expect(first != second)
        #expect(first.prefix(29) != second.prefix(29))
        #expect(hasher.verify("pass", against: first) && hasher.verify("pass", against: second))
    }

    @Test(
        "Known bcrypt vectors (computed with libxcrypt via Python's crypt, and OpenBSD's U*U vector)",
        arguments: [
            ("pass", "$2b$04$abcdefghijklmnopqrstuufznL8bkzdtHwLhca4To/v9Lo9bA7fR6"),
            ("correct horse battery staple", "$2b$04$ABCDEFGHIJKLMNOPQRSTUuHzrfeaHESIafIgIn5rRlQxo3XhcNIeq"),
            ("U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
        ]
    )
    func knownVectors(password: String, hash: String) {
        #expect(hasher.verify(password, against: hash))
        #expect(!hasher.verify(password + "x", against: hash))
    }

    @Test("Malformed or non-bcrypt hashes never verify")
    func malformedHashes() {
        for hash in ["", "*", "$2b$04$short", "pass", "$1$abcdefgh$", "$6$salt$", "$2b$99$abcdefghijklmnopqrstuu"] {
            #expect(!hasher.verify("pass", against: hash), "\(hash)")
        }
    }

    @Test("Empty passwords are refused unless allowed")
    func emptyPasswords() throws {
        #expect(throws: GatewayError.badRequest("Empty passwords are not allowed")) { try hasher.hash("") }
        let hash = try hasher.hash("", allowEmpty: true)
        #expect(hasher.verify("", against: hash))
        #expect(!hasher.verify("x", against: hash))
    }

    @Test("Passwords longer than 72 bytes are accepted; bcrypt ignores the bytes after the 72nd")
    func longPasswords() throws {
        let long = String(repeating: "a", count: 72)
        let hash = try hasher.hash(long + "tail")
        #expect(hasher.verify(long + "tail", against: hash))
        #expect(hasher.verify(long + "other", against: hash))
        #expect(!hasher.verify(String(repeating: "a", count: 71), against: hash))
    }

    @Test("Passwords with NUL are refused and never verify")
    func nulPasswords() throws {
        #expect(throws: GatewayError.self) { try hasher.hash("ab\u{0}cd") }
        let hash = try hasher.hash("abc")
        #expect(!hasher.verify("abc\u{0}def", against: hash))
    }

    @Test("Unicode passwords round-trip")
    func unicode() throws {
        let hash = try hasher.hash("pässwörd🔑")
        #expect(hasher.verify("pässwörd🔑", against: hash))
        #expect(!hasher.verify("passwörd🔑", against: hash))
    }

    // MARK: - ConstantTime

    @Test("Constant-time equality of bytes and strings")
    func constantTime() {
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2] as [UInt8], [1, 2, 0] as [UInt8]))
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", ""))
        #expect(!ConstantTime.equals("é", "e\u{301}"))
    }
}
