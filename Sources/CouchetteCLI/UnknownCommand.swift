import Foundation

// MARK: - UnknownCommand

/// What `couchette` says for a first word that is no command and no database: "unknown command", with the commands
/// whose names are close to it (a typo or a prefix), as git does.
///
/// ```swift
/// UnknownCommand.message(for: "lss", commands: ["ls", "lscoll", "cat"])
/// // "couchette: unknown command 'lss'. The most similar: ls\n"
/// ```
enum UnknownCommand {
    /// The message for `word`, or nil when it is a command, an option, or may name a database or a file (a path, a
    /// name with a dot, or one that exists here with or without `.couchette`).
    static func message(for word: String, commands: [String]) -> String? {
        guard !word.isEmpty, !word.hasPrefix("-"), !commands.contains(word), !["help"].contains(word),
            !word.contains("/"), !word.contains("."), !FileManager.default.fileExists(atPath: word),
            !FileManager.default.fileExists(atPath: word + ".couchette")
        else { return nil }
        let close = commands.filter { $0.hasPrefix(word) || word.hasPrefix($0) || distance(word, $0) <= 2 }
            .sorted { distance(word, $0) < distance(word, $1) }
        let suggestion = close.isEmpty ? " See 'couchette --help'." : " The most similar: \(close.joined(separator: ", "))"
        return "couchette: unknown command '\(word)'.\(suggestion)\n"
    }

    /// The Levenshtein distance between two words.
    static func distance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs), b = Array(rhs)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
