import Dispatch
import Foundation

// MARK: - Interruption

/// SIGINT (Ctrl-C) and SIGTERM as an event, so a long-running command (`serve`, a continuous replication) stops
/// cleanly and closes its database instead of dying.
enum Interruption {
    /// Returns when the process is asked to stop by SIGINT or SIGTERM (their default action is turned off).
    static func wait() async {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        for await _ in stream { break }
        for source in sources { source.cancel() }
    }
}
