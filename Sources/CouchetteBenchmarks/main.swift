// `make bench`: every figure is a ratio against a baseline run in this process, printed as
// `BENCH <figure> <value> <goal>` (higher is better).
print("# Couchette benchmarks: BENCH <figure> <ratio against baseline> <goal>")
try JSONBenchmark().run()
