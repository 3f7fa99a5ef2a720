import CouchetteGateway
import Foundation
import Logging

/// Times a piece of work against a baseline doing the same work, in the same process, and prints the ratio
/// as `BENCH <figure> <value> <goal>`.
struct Benchmark {
    /// Runs `body` `repetitions` times and returns the fastest run in seconds.
    static func fastest(repetitions: Int = 5, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repetitions {
            best = min(best, try timed(body))
        }
        return best
    }

    /// Seconds in a duration.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Seconds since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        seconds(ContinuousClock.now - start)
    }

    /// Seconds `body` takes.
    static func timed(_ body: () throws -> Void) rethrows -> Double {
        seconds(try ContinuousClock().measure(body))
    }

    /// Seconds `body` took.
    static func timedAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return seconds(ContinuousClock.now - start)
    }

    /// The processor time this process used so far, user and system, in seconds: for comparing two ways of doing
    /// the same work on a machine whose speed drifts (wall-clock ratios move with it; the work each way costs does
    /// not).
    static func processorSeconds() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    /// The processor time, user and system, in seconds, that this process's finished children used so far (a tool
    /// it ran and waited for).
    static func childrenProcessorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Prints one figure: how many times faster `measured` is than `baseline` (higher is better).
    static func report(_ figure: String, baselineSeconds: Double, measuredSeconds: Double, goal: String) {
        let ratio = baselineSeconds / measuredSeconds
        print("# \(figure): baseline \(format(baselineSeconds * 1000)) ms, measured \(format(measuredSeconds * 1000)) ms")
        print("BENCH \(figure) \(format(ratio)) \(goal)")
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return String(scaled)
    }

    /// A gateway configuration on loopback, both listeners on port 0, with `databases`.
    static func loopbackGateway(_ databases: [DatabaseConfig]) -> GatewayConfig {
        GatewayConfig(
            interface: InterfaceAddress(host: "127.0.0.1", port: 0),
            adminInterface: InterfaceAddress(host: "127.0.0.1", port: 0),
            databases: Dictionary(uniqueKeysWithValues: databases.map { ($0.name, $0) }))
    }

    /// A logger that stays silent, for gateways run by benchmarks.
    static var quietLogger: Logger {
        var logger = Logger(label: "couchette.bench")
        logger.logLevel = .critical
        return logger
    }
}
