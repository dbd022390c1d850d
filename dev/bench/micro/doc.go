// Package micro holds the CPU and memory benchmarks of the lambdaidem
// wrapper over the in-memory store (run them with -bench and -benchmem):
// a first request and a replay at 1 KB and 64 KB payloads, in both modes,
// with and without the local cache, key and fingerprint derivation alone,
// and a 6 MiB request body through the apigw adapter (its peak memory over
// the body's size, beside the tree the adapter used to decode it into). The package has no code of its own; bench/cmd/bench runs these
// benchmarks and reports them in bench/RESULTS.md.
package micro
