import Foundation
import Testing

@testable import Couchette

/// A custom logger that records what it receives.
private struct RecordingLogger: CustomLogger {
    let level: LogLevel
    let received = LoggingLock<[(level: LogLevel, domain: LogDomain, message: String)]>([])

    func log(level: LogLevel, domain: LogDomain, message: String) {
        received.withLock { $0.append((level, domain, message)) }
    }

    var messages: [String] { received.withLock { $0.map(\.message) } }
}

/// 2026-11-22T01:02:03.456Z
private let fixedDate = Date(timeIntervalSince1970: 1_795_309_323.456)

private let messageLevels: [LogLevel] = [.debug, .verbose, .info, .warning, .error]
private let allLevels: [LogLevel] = messageLevels + [.none]

/// A separate log whose console lines are captured, with a fixed clock.
private func makeLog() -> (log: Log, console: LoggingLock<[String]>) {
    let lines = LoggingLock<[String]>([])
    let log = Log(consoleOutput: { line in lines.withLock { $0.append(line) } }, clock: { fixedDate })
    return (log, lines)
}

@Suite(.timeLimit(.minutes(5))) struct LoggingTests {
    // MARK: - Types

    @Test func levelsAreOrderedBySeverity() {
        #expect(allLevels == allLevels.sorted())
        #expect(LogLevel.debug < LogLevel.verbose && LogLevel.verbose < LogLevel.info)
        #expect(LogLevel.info < LogLevel.warning && LogLevel.warning < LogLevel.error)
        #expect(LogLevel.error < .none)
    }

    @Test func domainSetsHoldEachDomain() {
        let pairs: [(LogDomain, LogDomains)] = [
            (.database, .database), (.query, .query), (.replicator, .replicator), (.network, .network),
            (.listener, .listener),
        ]
        for (domain, set) in pairs {
            #expect(domain.asSet == set)
            #expect(LogDomains.all.includes(domain))
            #expect(set.includes(domain))
            #expect(pairs.filter { $0.0 != domain }.allSatisfy { !set.includes($0.0) })
        }
        #expect(!LogDomains([]).includes(.database))
    }

    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (-1.0, "1969-12-31T23:59:59.000Z"),
        (951_782_400.5, "2000-02-29T00:00:00.500Z"),
        (1_795_309_323.456, "2026-11-22T01:02:03.456Z"),
        (4_102_444_799.999, "2099-12-31T23:59:59.999Z"),
    ])
    func timestampsAreISO8601UTCWithMilliseconds(seconds: Double, expected: String) {
        #expect(LogLineFormatter.timestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func defaults() {
        let (log, _) = makeLog()
        #expect(log.console.level == .warning)
        #expect(log.console.domains == .all)
        #expect(log.file.config == nil)
        #expect(log.file.level == .info)
        #expect(log.custom == nil)
        let config = LogFileConfiguration(directory: "/tmp/x")
        #expect(config.directory == "/tmp/x")
        #expect(config.maxSize == 500 * 1024)
        #expect(config.maxRotateCount == 1)
        #expect(config.usePlainText)
    }

    // MARK: - Console

    @Test func consoleLineFormat() {
        let (log, console) = makeLog()
        log.emit(.warning, .database, "disk almost full")
        log.emit(.error, .replicator, "remote said 500")
        #expect(
            console.withLock { $0 } == [
                "2026-11-22T01:02:03.456Z Couchette [database] WARNING: disk almost full",
                "2026-11-22T01:02:03.456Z Couchette [replicator] ERROR: remote said 500",
            ])
    }

    @Test(arguments: allLevels)
    func consoleFiltersByLevel(threshold: LogLevel) {
        let (log, console) = makeLog()
        log.console.level = threshold
        #expect(log.console.level == threshold)
        for level in messageLevels {
            log.emit(level, .query, "at \(level.label)")
        }
        log.emit(.none, .query, "never")
        let expected = messageLevels.filter { $0 >= threshold }.map { "at \($0.label)" }
        #expect(console.withLock { $0 }.map { String($0.split(separator: " ", maxSplits: 4)[4]) } == expected)
    }

    @Test func consoleFiltersByDomain() {
        let (log, console) = makeLog()
        log.console.level = .debug
        log.console.domains = [.replicator, .network]
        #expect(log.console.domains == [.replicator, .network])
        for domain in [LogDomain.database, .query, .replicator, .network, .listener] {
            log.emit(.info, domain, domain.name)
        }
        #expect(console.withLock { $0 }.map { $0.hasSuffix("INFO: replicator") || $0.hasSuffix("INFO: network") }
            == [true, true])

        log.console.domains = []
        log.emit(.error, .replicator, "hidden")
        #expect(console.withLock { $0.count } == 2)
    }

    @Test func helpersEmitAtTheirLevel() {
        let (log, console) = makeLog()
        log.console.level = .debug
        log.debug(.listener, "d")
        log.verbose(.listener, "v")
        log.info(.listener, "i")
        log.warning(.listener, "w")
        log.error(.listener, "e")
        #expect(
            console.withLock { $0 }.map { String($0.split(separator: " ", maxSplits: 2)[2]) } == [
                "[listener] DEBUG: d", "[listener] VERBOSE: v", "[listener] INFO: i", "[listener] WARNING: w",
                "[listener] ERROR: e",
            ])
    }

    // MARK: - Custom logger

    @Test(arguments: allLevels)
    func customLoggerReceivesExactlyMessagesAtOrAboveItsLevel(threshold: LogLevel) {
        let (log, console) = makeLog()
        log.console.level = .none
        let recorder = RecordingLogger(level: threshold)
        log.custom = recorder
        for level in messageLevels {
            log.emit(level, .network, "at \(level.label)")
        }
        log.emit(.none, .network, "never")
        let expected = messageLevels.filter { $0 >= threshold }
        #expect(recorder.received.withLock { $0.map(\.level) } == expected)
        #expect(recorder.messages == expected.map { "at \($0.label)" })
        #expect(recorder.received.withLock { $0.allSatisfy { $0.domain == .network } })
        #expect(console.withLock { $0.isEmpty })
    }

    @Test func customLoggerIgnoresConsoleDomainsAndCanBeRemoved() {
        let (log, _) = makeLog()
        log.console.domains = [.network]
        let recorder = RecordingLogger(level: .info)
        log.custom = recorder
        #expect(log.custom is RecordingLogger)
        log.emit(.info, .database, "one")
        log.custom = nil
        log.emit(.info, .database, "two")
        #expect(recorder.messages == ["one"])
    }

    // MARK: - Laziness

    @Test func messageIsNotBuiltWhenNobodyWantsIt() throws {
        let evaluations = LoggingLock(0)
        func message() -> String {
            evaluations.withLock { $0 += 1 }
            return "expensive"
        }
        let (log, console) = makeLog()

        log.console.level = .none
        log.emit(.error, .database, message())
        log.emit(.debug, .database, message())
        #expect(!log.isEnabled(.error, .database))

        log.console.level = .warning
        log.emit(.info, .database, message())
        log.console.domains = [.query]
        log.emit(.error, .database, message())

        let recorder = RecordingLogger(level: .error)
        log.custom = recorder
        log.emit(.warning, .database, message())

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        log.file.config = LogFileConfiguration(directory: directory.path)
        log.file.level = .error
        log.emit(.warning, .database, message())
        log.emit(.none, .database, message())
        #expect(evaluations.withLock { $0 } == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path))

        // Wanted by all three: built exactly once.
        log.console.domains = .all
        #expect(log.isEnabled(.error, .database))
        log.emit(.error, .database, message())
        #expect(evaluations.withLock { $0 } == 1)
        #expect(console.withLock { $0.count } == 1)
        #expect(recorder.messages == ["expensive"])
        let written = try String(contentsOf: directory.appendingPathComponent("couchette.log"), encoding: .utf8)
        #expect(written.hasSuffix("ERROR: expensive\n"))
    }

    @Test func concurrentEmitsAndSettingChanges() async {
        let (log, console) = makeLog()
        log.console.level = .info
        let recorder = RecordingLogger(level: .debug)
        log.custom = recorder
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        log.emit(.info, .query, "\(task)-\(index)")
                        if index % 50 == 0 { log.console.domains = .all }
                    }
                }
            }
        }
        #expect(console.withLock { $0.count } == 1600)
        #expect(Set(recorder.messages).count == 1600)
    }
}

/// Tests of ``Log/shared``; serialized, and each restores what it changed.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LoggingSharedTests {
    @Test func sharedIsOneInstance() {
        #expect(Log.shared === Log.shared)
    }

    @Test func sharedForwardsToItsCustomLogger() {
        let previous = Log.shared.custom
        defer { Log.shared.custom = previous }
        let recorder = RecordingLogger(level: .debug)
        Log.shared.custom = recorder
        let marker = "shared-\(UUID().uuidString)"
        Log.shared.debug(.database, marker)
        #expect(recorder.messages.contains(marker))
    }
}
