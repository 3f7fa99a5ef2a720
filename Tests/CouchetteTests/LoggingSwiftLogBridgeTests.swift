import Foundation
import Logging
import Testing

@testable import Couchette

/// One message received by ``MemoryLogHandler``.
private struct ReceivedEvent: Sendable {
    var level: Logging.Logger.Level
    var message: String
    var metadata: Logging.Logger.Metadata
    var source: String
}

/// A swift-log handler that keeps messages in memory.
private struct MemoryLogHandler: LogHandler {
    let events: LoggingLock<[ReceivedEvent]>
    var metadata: Logging.Logger.Metadata = [:]
    var logLevel: Logging.Logger.Level = .trace

    subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        events.withLock {
            $0.append(ReceivedEvent(level: event.level, message: event.message.description, metadata: merged,
                                    source: event.source))
        }
    }
}

private func makeLogger(level: Logging.Logger.Level = .trace) -> (Logging.Logger, LoggingLock<[ReceivedEvent]>) {
    let events = LoggingLock<[ReceivedEvent]>([])
    var logger = Logging.Logger(label: "couchette.tests") { _ in MemoryLogHandler(events: events) }
    logger.logLevel = level
    return (logger, events)
}

@Suite(.timeLimit(.minutes(5))) struct LoggingSwiftLogBridgeTests {
    @Test func forwardsThroughLogWithMappedLevelsAndDomainMetadata() {
        let (logger, events) = makeLogger()
        let log = Log(consoleOutput: { _ in })
        log.console.level = .none
        log.custom = SwiftLogBridge(logger, level: .verbose)
        #expect(log.custom?.level == .verbose)

        log.emit(.debug, .replicator, "dropped")
        log.emit(.verbose, .replicator, "v")
        log.emit(.info, .database, "i")
        log.emit(.warning, .network, "w")
        log.emit(.error, .listener, "e")

        let received = events.withLock { $0 }
        #expect(received.map(\.level) == [.debug, .info, .warning, .error])
        #expect(received.map(\.message) == ["v", "i", "w", "e"])
        #expect(received.map { $0.metadata["domain"]?.description } == ["replicator", "database", "network", "listener"])
        #expect(received.allSatisfy { $0.source == "Couchette" })
    }

    @Test func defaultLevelIsInfo() {
        let (logger, _) = makeLogger()
        #expect(SwiftLogBridge(logger).level == .info)
    }

    @Test(arguments: [
        (LogLevel.debug, Logging.Logger.Level.trace), (.verbose, .debug), (.info, .info), (.warning, .warning),
        (.error, .error),
    ])
    func mapsEachLevel(level: LogLevel, expected: Logging.Logger.Level) {
        let (logger, events) = makeLogger()
        SwiftLogBridge(logger, level: .debug).log(level: level, domain: .query, message: "m")
        #expect(events.withLock { $0.map(\.level) } == [expected])
    }

    @Test func noneIsNotForwardedAndTheLoggersOwnLevelStillApplies() {
        let (logger, events) = makeLogger(level: .warning)
        let bridge = SwiftLogBridge(logger, level: .debug)
        bridge.log(level: .none, domain: .query, message: "none")
        bridge.log(level: .info, domain: .query, message: "below the swift-log level")
        bridge.log(level: .error, domain: .query, message: "kept")
        #expect(events.withLock { $0.map(\.message) } == ["kept"])
    }
}
