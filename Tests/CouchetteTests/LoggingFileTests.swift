import Foundation
import Testing

@testable import Couchette

/// A fresh directory under the temporary directory (not created), removed by `cleanUp`.
private struct TemporaryLogDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("couchette-log-\(UUID().uuidString)")
    var path: String { url.path }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }

    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func lines(_ name: String) -> [String] {
        guard let text = try? String(contentsOf: url.appendingPathComponent(name), encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    func size(_ name: String) -> UInt64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(name).path)
        return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
    }
}

/// A log that only writes files.
private func makeFileLog() -> Log {
    let log = Log(consoleOutput: { _ in })
    log.console.level = .none
    return log
}

@Suite(.timeLimit(.minutes(5))) struct LoggingFileTests {
    @Test func writesLinesToTheConfiguredDirectory() {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let nested = directory.url.appendingPathComponent("a/b").path
        let log = makeFileLog()

        log.emit(.error, .database, "before config")
        #expect(!FileManager.default.fileExists(atPath: directory.path))

        log.file.config = LogFileConfiguration(directory: nested)
        #expect(log.file.config?.directory == nested)
        log.emit(.info, .database, "hello")
        log.emit(.verbose, .database, "too chatty")
        log.emit(.warning, .replicator, "careful")

        let lines = (try? String(contentsOfFile: nested + "/couchette.log", encoding: .utf8))?
            .split(separator: "\n").map(String.init) ?? []
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix(" Couchette [database] INFO: hello") == true)
        #expect(lines.last?.hasSuffix(" Couchette [replicator] WARNING: careful") == true)
        #expect(lines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "#, options: .regularExpression) != nil })
    }

    @Test func fileLevelFilters() {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let log = makeFileLog()
        log.file.config = LogFileConfiguration(directory: directory.path)
        log.file.level = .warning
        #expect(log.file.level == .warning)
        for level: LogLevel in [.debug, .verbose, .info, .warning, .error] {
            log.emit(level, .query, level.label)
        }
        log.file.level = .none
        log.emit(.error, .query, "silenced")
        #expect(directory.lines("couchette.log").map { $0.components(separatedBy: ": ").last } == ["WARNING", "ERROR"])
    }

    @Test func settingConfigToNilStopsOutput() {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let log = makeFileLog()
        log.file.config = LogFileConfiguration(directory: directory.path)
        log.emit(.info, .database, "one")
        log.file.config = nil
        #expect(log.file.config == nil)
        log.emit(.error, .database, "two")
        #expect(directory.lines("couchette.log").count == 1)

        // A new configuration appends to the existing file.
        log.file.config = LogFileConfiguration(directory: directory.path)
        log.emit(.info, .database, "three")
        #expect(directory.lines("couchette.log").map { $0.components(separatedBy: ": ").last } == ["one", "three"])
        #expect(directory.names() == ["couchette.log"])
    }

    @Test(arguments: [0, 1, 3])
    func rotatesWhenMaxSizeIsExceeded(maxRotateCount: Int) {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let log = makeFileLog()
        var config = LogFileConfiguration(directory: directory.path)
        config.maxSize = 200
        config.maxRotateCount = maxRotateCount
        log.file.config = config
        let count = 60
        for index in 0..<count {
            log.emit(.info, .database, "line \(String(format: "%03d", index))")
        }

        let expectedNames = ["couchette.log"] + (0..<maxRotateCount).map { "couchette.log.\($0 + 1)" }
        #expect(directory.names() == expectedNames.sorted())
        for name in expectedNames {
            #expect(directory.size(name) <= 200)
            #expect(directory.size(name) > (name == "couchette.log" ? 0 : 100))   // rotated files are nearly full
        }
        // Oldest file first, the lines are the last ones written, in order and without gaps.
        let kept = expectedNames.reversed().flatMap { directory.lines($0) }
        let numbers = kept.compactMap { Int($0.components(separatedBy: "line ").last ?? "") }
        #expect(numbers.count == kept.count)
        #expect(numbers.last == count - 1)
        #expect(numbers == Array((count - numbers.count)..<count))
        #expect(numbers.count < count)
    }

    @Test func rotationDeletesStaleFilesBeyondMaxRotateCount() throws {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        for name in ["couchette.log.2", "couchette.log.7", "other.txt"] {
            try Data("old\n".utf8).write(to: directory.url.appendingPathComponent(name))
        }
        let log = makeFileLog()
        var config = LogFileConfiguration(directory: directory.path)
        config.maxSize = 200
        log.file.config = config
        for index in 0..<10 {
            log.emit(.info, .database, "line \(index)")
        }
        #expect(directory.names() == ["couchette.log", "couchette.log.1", "other.txt"])
    }

    @Test func jsonLinesWhenNotPlainText() throws {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let log = Log(consoleOutput: { _ in }, clock: { Date(timeIntervalSince1970: 1_795_309_323.456) })
        var config = LogFileConfiguration(directory: directory.path)
        config.usePlainText = false
        log.file.config = config
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{7} é 🎉"
        log.emit(.warning, .network, tricky)

        #expect(directory.names() == ["couchette.jsonl"])
        let lines = directory.lines("couchette.jsonl")
        #expect(lines.count == 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String])
        #expect(
            object == [
                "time": "2026-11-22T01:02:03.456Z", "level": "warning", "domain": "network", "message": tricky,
            ])
    }

    @Test func concurrentWritesAreSerialized() {
        let directory = TemporaryLogDirectory()
        defer { directory.cleanUp() }
        let log = makeFileLog()
        var config = LogFileConfiguration(directory: directory.path)
        config.maxSize = 4096
        config.maxRotateCount = 1000
        log.file.config = config
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<250 {
                log.emit(.info, .replicator, "t\(thread) i\(index)")
            }
        }
        let lines = directory.names().flatMap { directory.lines($0) }
        #expect(lines.count == 2000)
        #expect(Set(lines.map { $0.components(separatedBy: "INFO: ").last ?? "" }).count == 2000)
        #expect(lines.allSatisfy { $0.contains(" Couchette [replicator] INFO: t") })
        #expect(directory.names().allSatisfy { directory.size($0) <= 4096 })
    }
}
