// MARK: - CredentialsOption

/// `--user NAME[:PASSWORD]`: the password after the colon, else asked for on the terminal (so it need not be a
/// visible argument).
enum CredentialsOption {
    static func parse(_ text: String) throws -> (name: String, password: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty else { throw CLIError.usage("--user needs a name: NAME or NAME:PASSWORD.") }
        guard let password = parts.count == 2 ? parts[1] : PasswordPrompt.read("Password for \(parts[0]): ") else {
            throw CLIError.usage("No password for \(parts[0]).")
        }
        return (parts[0], password)
    }
}
