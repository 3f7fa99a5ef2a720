/// A set of ``LogDomain``s, used to filter the console output.
///
/// ```swift
/// Database.log.console.domains = [.replicator, .network]
/// Database.log.console.domains = .all          // the default
/// ```
///
/// See spec `lite-api.md` §9 "Logging".
public struct LogDomains: OptionSet, Sendable {
    /// The bits of the set: bit `n` stands for the ``LogDomain`` whose raw value is `n`.
    public let rawValue: Int

    /// Creates a set from its bits (bit `n` for the ``LogDomain`` with raw value `n`).
    ///
    /// - Parameter rawValue: The bits of the set.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// ``LogDomain/database``.
    public static let database = LogDomains(rawValue: 1 << 0)
    /// ``LogDomain/query``.
    public static let query = LogDomains(rawValue: 1 << 1)
    /// ``LogDomain/replicator``.
    public static let replicator = LogDomains(rawValue: 1 << 2)
    /// ``LogDomain/network``.
    public static let network = LogDomains(rawValue: 1 << 3)
    /// ``LogDomain/listener``.
    public static let listener = LogDomains(rawValue: 1 << 4)
    /// Every domain.
    public static let all: LogDomains = [.database, .query, .replicator, .network, .listener]

    /// Whether `domain` is in the set.
    func includes(_ domain: LogDomain) -> Bool {
        contains(domain.asSet)
    }
}
