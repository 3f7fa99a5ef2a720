import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - PasswordPrompt

/// Reads a password: from the terminal without echoing it, or a line of standard input when that is not a
/// terminal (a script piping it in). Never from a visible argument.
enum PasswordPrompt {
    static func read(_ prompt: String) -> String? {
        guard isatty(STDIN_FILENO) != 0 else { return Swift.readLine(strippingNewline: true) }
        FileHandleOutput.standardError(prompt)
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            FileHandleOutput.standardError("\n")
        }
        return Swift.readLine(strippingNewline: true)
    }
}

// MARK: - FileHandleOutput

/// Writes to standard output and standard error, unbuffered.
enum FileHandleOutput {
    static func standardOutput(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func standardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
