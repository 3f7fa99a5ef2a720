import ArgumentParser
import Couchette

// MARK: - CLIError

/// The tool's one error type, each with its exit code: 1 an error, 2 a usage mistake, 3 not found, 4 wrong key.
enum CLIError: Error, CustomStringConvertible {
    case failed(String)
    case usage(String)
    case notFound(String)
    case wrongKey(String)

    var description: String {
        switch self {
        case .failed(let text), .usage(let text), .notFound(let text), .wrongKey(let text): text
        }
    }

    /// The process exit code.
    var exitCode: Int32 {
        switch self {
        case .failed: 1
        case .usage: 2
        case .notFound: 3
        case .wrongKey: 4
        }
    }

    /// Any error of a command as the tool reports it.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as CouchetteError:
            switch error.code {
            case .notFound: return .notFound(error.message)
            case .unauthorized, .wrongEncryptionKey: return .wrongKey(error.message)
            default: return .failed(error.message)
            }
        default: return .failed(String(describing: error))
        }
    }
}

/// Runs a command's body, turning its errors into the tool's message and exit code.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        let failure = CLIError.from(error)
        FileHandleOutput.standardError("couchette: \(failure.description)\n")
        throw ExitCode(failure.exitCode)
    }
}
