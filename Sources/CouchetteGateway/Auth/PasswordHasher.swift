import CouchetteCore
import CCrypt

// MARK: - PasswordHasher

/// bcrypt password hashing, as Sync Gateway stores passwords, through libxcrypt.
///
/// Hashes look like `$2b$10$<22-character salt><31-character hash>`. Verification re-hashes the candidate with the
/// stored salt and cost and compares the results in constant time (``ConstantTime``).
///
/// ```swift
/// let hasher = PasswordHasher(cost: 4)          // tests: fast; production: the default 10
/// let hash = try hasher.hash("pass")            // "$2b$04$…"
/// hasher.verify("pass", against: hash)          // true
/// ```
///
/// ## The 72-byte limit
/// bcrypt only uses the first 72 bytes (UTF-8) of a password: longer passwords are accepted, as Sync Gateway
/// accepts them, but two passwords sharing their first 72 bytes verify against each other's hash.
///
/// Passwords containing a NUL character are refused by ``hash(_:cost:allowEmpty:)`` and never verify, since the C API
/// would silently cut them at the NUL.
public struct PasswordHasher: PasswordHashing {
    // MARK: - Constants

    /// The default bcrypt cost (2^10 rounds), as Sync Gateway uses.
    public static let defaultCost = 10

    /// The costs bcrypt accepts.
    public static let costRange = 4...31

    /// The number of password bytes bcrypt uses; the rest is ignored.
    public static let significantPasswordBytes = 72

    /// The hash prefixes accepted by ``verify(_:against:)``: bcrypt's variants.
    static let bcryptPrefixes = ["$2b$", "$2a$", "$2y$"]

    // MARK: - Properties

    /// The cost used by ``hash(_:allowEmpty:)``.
    public let cost: Int

    // MARK: - Initialiser

    /// Creates a hasher.
    ///
    /// - Parameter cost: The bcrypt cost, 4…31; 4 is for tests only.
    /// - Precondition: `cost` is in ``costRange``.
    public init(cost: Int = PasswordHasher.defaultCost) {
        precondition(Self.costRange.contains(cost), "bcrypt cost must be in \(Self.costRange), got \(cost)")
        self.cost = cost
    }

    // MARK: - Hashing

    /// Hashes a password with this hasher's ``cost`` and a fresh random salt.
    public func hash(_ password: String, allowEmpty: Bool) throws(GatewayError) -> String {
        try hash(password, cost: cost, allowEmpty: allowEmpty)
    }

    /// Hashes a password with an explicit cost and a fresh random salt.
    ///
    /// - Parameters:
    ///   - password: The plain-text password; only its first 72 UTF-8 bytes matter.
    ///   - cost: The bcrypt cost, 4…31.
    ///   - allowEmpty: Whether the empty password is acceptable.
    /// - Returns: `$2b$<cost>$…`.
    /// - Throws: 400 for an empty password (unless allowed) or one containing NUL; 500 for a bad cost or a libxcrypt
    ///   failure.
    public func hash(_ password: String, cost: Int, allowEmpty: Bool = false) throws(GatewayError) -> String {
        guard allowEmpty || !password.isEmpty else {
            throw .badRequest("Empty passwords are not allowed")
        }
        guard !password.utf8.contains(0) else {
            throw .badRequest("Passwords may not contain NUL characters")
        }
        guard Self.costRange.contains(cost) else {
            throw .internalError("bcrypt cost must be in \(Self.costRange)")
        }
        let setting = try Self.makeSetting(cost: cost)
        guard let hash = Self.crypt(password, setting: setting), hash.hasPrefix("$2b$") else {
            throw .internalError("bcrypt hashing failed")
        }
        return hash
    }

    // MARK: - Verification

    /// Whether `password` matches a bcrypt `hash`; any other kind of hash, or a malformed one, never matches.
    ///
    /// The bcrypt output is compared with the stored hash byte for byte without an early exit.
    public func verify(_ password: String, against hash: String) -> Bool {
        guard Self.bcryptPrefixes.contains(where: { hash.hasPrefix($0) }), !password.utf8.contains(0),
            let computed = Self.crypt(password, setting: hash)
        else { return false }
        return ConstantTime.equals(computed, hash)
    }

    // MARK: - libxcrypt

    /// A `$2b$<cost>$<salt>` setting with 16 bytes from the system CSPRNG.
    private static func makeSetting(cost: Int) throws(GatewayError) -> String {
        var generator = SystemRandomNumberGenerator()
        let entropy = (0..<16).map { _ in CChar(bitPattern: UInt8.random(in: .min ... .max, using: &generator)) }
        var output = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        let result = entropy.withUnsafeBufferPointer { random in
            crypt_gensalt_rn("$2b$", UInt(cost), random.baseAddress, Int32(random.count), &output, Int32(output.count))
        }
        guard result != nil else { throw .internalError("bcrypt salt generation failed") }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `crypt_rn(phrase, setting)` with a zeroed, heap-allocated `struct crypt_data` (about 32 KiB), wiped after use;
    /// `nil` when libxcrypt rejects the setting.
    private static func crypt(_ phrase: String, setting: String) -> String? {
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        defer {
            data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            data.deallocate()
        }
        guard let result = crypt_rn(phrase, setting, data, Int32(size)) else { return nil }
        let output = String(cString: result)
        // libxcrypt signals some failures with a "*0"/"*1" string instead of NULL.
        guard !output.hasPrefix("*") else { return nil }
        return output
    }
}
