import CouchetteSQLite
import Foundation

// `make bench`: every figure is a ratio against a baseline run in this process, printed as
// `BENCH <figure> <value> <goal>` (higher is better). `BENCH_DOCUMENTS` changes the document count.
try await RemoteFeedGroup.runClientIfAsked()  // the child side of the 10,000-feed benchmark
try await BLIPIdleClients.runChildIfAsked()  // the child side of blip.feeds-kb
try await ScaleBenchmark.runMemoryChildIfAsked()  // the child side of scale.memory.after-requests
try await ScaleBenchmark.runPullChildIfAsked()  // the client side of scale.lite.pull-*
// SQLite's memory statistics are a process-wide setting: off (as Couchette's first connection sets them) before the
// raw SQLite baselines open their files, so that both sides of every figure run with the same.
Connection.turnOffMemoryStatistics()
print("# Couchette benchmarks: BENCH <figure> <ratio against baseline> <goal>")
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"]
if only == nil || only == "json" { try JSONBenchmark().run() }
let documents = ProcessInfo.processInfo.environment["BENCH_DOCUMENTS"].flatMap(Int.init) ?? 100_000
if only == nil || only == "batched" || only == "lite" {
    try LiteBenchmark(count: documents).run()
}
if only == nil || only == "lite" || only == "reads" { try ReadDuringWritesBenchmark(count: documents).run() }
if only == nil || only == "gateway" {
    try await GatewayBenchmark(count: documents).run()
}
if only == nil || only == "syncfn" {
    try await SyncIngestBenchmark(count: max(documents / 5, 1_000)).run()
}
if only == "syncfn-direct" {
    // For profiling: only the DocumentStore writes, without HTTP.
    try await SyncIngestBenchmark(count: documents).reportDirectWrites(sync: try SyncFunctionBenchmark.todoSource())
}
if only == nil || only == "syncfn" { try SyncFunctionBenchmark().run() }
if only == nil || only == "encryption" { try EncryptionBenchmark(count: documents).run() }
if only == nil || only == "replication" { try await ReplicationBenchmark(count: documents).run() }
if only == nil || only == "blip" { try await BLIPBenchmark(count: documents).run() }
if only == nil || only == "cbl3" { try await CBLiteBenchmark(count: documents).run() }
if only == "blip-feeds" { try await BLIPBenchmark(count: documents).runFeedMemoryOnly() }  // for profiling
if only == "blip-cpu" { try await BLIPBenchmark(count: documents).runProcessorTimesOnly() }  // for profiling
if only == nil || only == "auth" { try await AuthBenchmark().run() }
if only == nil || only == "changes" { try await ChangesBenchmark().run() }
if only == nil || only == "postgres" { try await PostgresBenchmark(count: max(documents / 5, 1_000)).run() }
if only == nil || only == "query" { try await QueryBenchmark(count: documents).run() }
if only == nil || only == "cli" { try CLIBenchmark(count: documents).run() }
// Not in the full run: its million-document databases take minutes to build (`make bench-scale`).
if only == "scale" { try await ScaleBenchmark().run() }
