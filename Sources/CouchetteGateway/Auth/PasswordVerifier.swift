import NIOCore
import NIOPosix

// MARK: - PasswordVerifier

/// Runs password verification — bcrypt, slow by design — on a small pool of threads of its own, never on the
/// event loops nor on Swift's cooperative threads, so that password guessing cannot stall other requests.
///
/// The pool has one thread per two cores (at least one); verifications beyond that wait their turn. It is shared
/// by every database of the process.
///
/// ```swift
/// let matches = await PasswordVerifier.shared.verify("pass", against: hash, with: PasswordHasher())
/// ```
public final class PasswordVerifier: Sendable {
    private let pool: NIOThreadPool

    /// The verifier every ``Authenticator`` uses by default.
    public static let shared = PasswordVerifier(threads: max(1, System.coreCount / 2))

    /// Creates a verifier with its own started pool; it lives as long as the process.
    ///
    /// - Parameter threads: How many verifications may run at once.
    public init(threads: Int) {
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
    }

    /// Whether `password` matches `hash`, checked on the pool; false if the pool is shutting down.
    public func verify(_ password: String, against hash: String, with hasher: any PasswordHashing) async -> Bool {
        (try? await pool.runIfActive { hasher.verify(password, against: hash) }) ?? false
    }
}
