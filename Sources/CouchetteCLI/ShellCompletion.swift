import CEditLine
import Foundation
import Synchronization

// MARK: - ShellCompletion

/// Tab completion for the shell through libedit: command names first, collections after `cd`, document IDs
/// after the commands that take one. libedit calls C functions without context, so the candidates come from one
/// provider installed for the process.
enum ShellCompletion {
    /// Gives the candidates for the word being typed: (words before it, its prefix) → completions.
    typealias Provider = @Sendable (_ previousWords: [String], _ prefix: String) -> [String]

    private static let provider = Mutex<Provider?>(nil)
    /// The matches of the completion in progress, handed to libedit one by one.
    private static let pending = Mutex<[String]>([])

    /// Makes libedit complete with `provider`.
    static func install(_ provider: @escaping Provider) {
        self.provider.withLock { $0 = provider }
        couchette_set_completion { text, start, _ in
            // The line up to the word being completed, for context.
            let line = couchette_line_buffer().map { String(cString: $0) } ?? ""
            let before = String(line.utf8.prefix(Int(start))) ?? ""
            let previous = (try? ShellWords.split(before)) ?? []
            let prefix = text.map { String(cString: $0) } ?? ""
            let candidates = ShellCompletion.provider.withLock { $0 }?(previous, prefix) ?? []
            ShellCompletion.pending.withLock { $0 = candidates.filter { $0.hasPrefix(prefix) }.sorted() }
            couchette_completion_over()  // no file-name completion when nothing matches
            return rl_completion_matches(text) { _, state in
                ShellCompletion.pending.withLock { pending in
                    guard !pending.isEmpty else { return nil }
                    return strdup(pending.removeFirst())
                }
            }
        }
    }
}
