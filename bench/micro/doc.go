// Package micro holds the CPU and memory benchmarks of the lambdaidem
// wrapper over the in-memory store (run them with -bench and -benchmem):
// a first request and a replay at 1 KB and 64 KB payloads, in both modes,
// with and without the local cache, and key and fingerprint derivation
// alone. The package has no code of its own; bench/cmd/bench runs these
// benchmarks and reports them in bench/RESULTS.md.
package micro
