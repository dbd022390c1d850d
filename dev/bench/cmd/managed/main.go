// Command managed measures lambdaidem as one Lambda Managed Instances
// process runs it, and writes its section of a results file (make
// bench-managed: build/bench/RESULTS.md; make bench-results publishes it):
//
//  1. bench: 64 concurrent invocations in one process, 5 ms added to every
//     DynamoDB call: latency p50/p99 of a bare handler, optimistic and
//     claim-first, DynamoDB calls per request, CPU per invocation; then
//     the lease renewals made by handlers running 0.1, 0.5 and 2 times
//     their lease;
//  2. soak: the same process under ten minutes of mixed traffic (new keys,
//     duplicates, in-flight conflicts, renewals, reconciles), with the live
//     heap and the goroutine count sampled into a PNG.
//
// The DynamoDB endpoint (minidyn behind the ddbtest module's fidelity proxy)
// runs in a child process, so that the CPU and the heap measured are the
// Lambda process's alone. Run it in the bench module (make bench-managed
// runs the first form):
//
//	cd dev/bench && go run ./cmd/managed -out ../../build/bench/RESULTS.md -chart ../../build/bench/soak.png
//	cd dev/bench && go run ./cmd/managed -skip soak -out ../../build/bench/RESULTS.md # the bench part; the last soak is kept
//
// Everything listens on 127.0.0.1 and every loop is bounded.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type config struct {
	latency     time.Duration
	concurrency int
	requests    int
	soak        time.Duration
	sample      time.Duration
	out         string
	chart       string
	skip        map[string]bool
}

func main() {
	serveIfChild()
	log.SetFlags(0)
	log.SetPrefix("managed: ")
	var c config
	var skip string
	flag.DurationVar(&c.latency, "latency", 5*time.Millisecond, "latency added to every DynamoDB call")
	flag.IntVar(&c.concurrency, "concurrency", 64, "concurrent invocations (AWS_LAMBDA_MAX_CONCURRENCY)")
	flag.IntVar(&c.requests, "requests", 20, "requests per invocation slot and scenario")
	flag.DurationVar(&c.soak, "soak", 10*time.Minute, "soak duration")
	flag.DurationVar(&c.sample, "sample", 5*time.Second, "soak sampling interval")
	flag.StringVar(&c.out, "out", "RESULTS.md", "results file; the Managed Instances section is replaced")
	flag.StringVar(&c.chart, "chart", "soak.png", "soak chart (PNG), beside the results file")
	flag.StringVar(&skip, "skip", "", "parts to skip: bench, soak")
	flag.Parse()
	c.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.skip[s] = true
		}
	}
	if c.concurrency < 1 || c.concurrency > 512 || c.requests < 1 || c.requests > 1000 || c.soak < 0 || c.soak > time.Hour || c.sample < 100*time.Millisecond {
		log.Fatal("-concurrency, -requests, -soak or -sample out of range")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.soak+15*time.Minute)
	defer cancel()
	if err := run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

// loadAverage is the 1, 5 and 15 minute load averages, or "n/a".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "n/a"
}

func run(ctx context.Context, c config) error {
	ep, err := startChild(ctx, c.latency)
	if err != nil {
		return err
	}
	defer ep.close()
	res := &results{started: time.Now(), config: c, loadStart: loadAverage()}
	if !c.skip["bench"] {
		log.Printf("bench: %d concurrent invocations, %v per call", c.concurrency, c.latency)
		if err := runBench(ctx, c, ep, res); err != nil {
			return err
		}
	}
	if !c.skip["soak"] {
		log.Printf("soak: %v of mixed traffic", c.soak)
		if err := runSoak(ctx, c, ep, res); err != nil {
			return err
		}
	}
	res.loadEnd = loadAverage()
	return res.write(c)
}
