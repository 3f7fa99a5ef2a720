import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReadmeTourTests

/// The README's gateway tour, run as written with curl against the bundled Todo config: every request succeeds
/// and the `_bulk_docs` example stores the list it shows.
@Suite("The README's gateway tour", .timeLimit(.minutes(5)))
struct ReadmeTourTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The curl commands of the README's "The gateway" code block, continuation lines joined, comments dropped.
    static func tourCommands() throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "### The gateway\n"),
            let block = readme[start.upperBound...].range(of: "```sh\n"),
            let end = readme[block.upperBound...].range(of: "```")
        else { throw TourError(description: "README.md has no gateway tour block") }
        var commands: [String] = []
        var current = ""
        for line in readme[block.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current.isEmpty && !trimmed.hasPrefix("curl") { continue }
            if trimmed.hasSuffix("\\") {
                current += trimmed.dropLast() + " "
                continue
            }
            current += Self.droppingComment(trimmed)
            commands.append(current)
            current = ""
        }
        return commands
    }

    struct TourError: Error, CustomStringConvertible {
        let description: String
    }

    /// The line without a trailing `# comment` (outside quotes).
    static func droppingComment(_ line: String) -> String {
        var quote: Character?
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#", index == line.startIndex || line[line.index(before: index)] == " " {
                return String(line[..<index]).trimmingCharacters(in: .whitespaces)
            }
        }
        return line
    }

    @Test("Every curl command of the tour succeeds against the Todo config")
    func tourRunsAsWritten() async throws {
        var config = try GatewayConfig.load(contentsOf: ExampleConfigTests.examplePath)
        config.interface = InterfaceAddress(host: "127.0.0.1", port: 0)
        config.adminInterface = InterfaceAddress(host: "127.0.0.1", port: 0)
        config.log = []
        config.logging = nil
        let commands = try Self.tourCommands()
        #expect(commands.count >= 10, "\(commands)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-tour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await GatewayFixture.withRunningGateway(config) { _, ports in
            for command in commands {
                let local = command.replacingOccurrences(of: "localhost:4984", with: "127.0.0.1:\(ports.publicPort)")
                    .replacingOccurrences(of: "localhost:4985", with: "127.0.0.1:\(ports.adminPort)")
                let waits = command.contains("feed=longpoll") || command.contains("feed=continuous")
                // Feeds that wait are cut after a second: a long poll with nothing new yet has sent nothing.
                let script =
                    "cd '\(folder.path)' && rm -f headers && \(local) -s -S -D headers --max-time \(waits ? 1 : 30); "
                    + "code=$?; echo; echo \"exit $code\"; head -1 headers 2>/dev/null; true"
                let output = try await ChildProcess.run(["sh", "-c", script], within: .seconds(60))
                let lines = output.split(separator: "\n").map(String.init)
                let exitLine = lines.last { $0.hasPrefix("exit ") } ?? ""
                let statusLine = lines.last { $0.hasPrefix("HTTP/") } ?? ""
                let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                if waits && exitLine == "exit 28" && status == 0 { continue }
                #expect(exitLine == "exit 0" || (waits && exitLine == "exit 28"), "\(command): \(output.prefix(500))")
                #expect((200..<300).contains(status), "\(command) → \(statusLine)\n\(output.prefix(500))")
                if command.contains("_bulk_docs") {
                    #expect(output.contains(#""id":"alice.list","rev":"1-"#), "\(output.prefix(500))")
                    #expect(output.contains(#""reason":"Invalid doc ID""#))
                }
            }
        }
    }
}
