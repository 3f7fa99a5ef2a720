import Couchette

/// What goes wrong in the app, as the user reads it.
enum TodoError: Error, CustomStringConvertible {
    /// The full-screen mode needs a terminal (use `--lines` in scripts).
    case notATerminal
    /// The password does not open the user's encrypted database (seed 000: "wrong password" is a 401).
    case wrongPassword
    /// A command the line mode does not know, or wrong arguments.
    case usage(String)
    /// Nothing by that name or number.
    case notFound(String)
    /// The library refused.
    case database(CouchetteError)

    var description: String {
        switch self {
        case .notATerminal: "The full-screen app needs a terminal; use --lines to read commands from standard input"
        case .wrongPassword: "Wrong password"
        case .usage(let message): message
        case .notFound(let what): "No \(what)"
        case .database(let error): error.message
        }
    }

    /// `error` as the app reports it.
    static func from(_ error: any Error) -> TodoError {
        if let error = error as? TodoError { return error }
        if let error = error as? CouchetteError {
            return error.code == .wrongEncryptionKey ? .wrongPassword : .database(error)
        }
        return .usage("\(error)")
    }
}
