// Command bench runs the lambdaidem benchmarks and writes bench/RESULTS.md
// and a latency chart (PNG):
//
//  1. DynamoDB round trips and latency, against one loopback endpoint (the
//     minidyn emulator behind ddbtest's fidelity proxy), at 0 ms and
//     5 ms added per call: a bare handler, lambdaidem claim-first and
//     optimistic (and claim-first with its local cache), and Powertools for
//     AWS Lambda (TypeScript) run by Node.js from bench/powertools;
//  2. CPU and allocations per invocation (go test -bench ./dev/bench/micro);
//  3. cold start: bootstrap sizes and Init Duration under the Lambda Runtime
//     Interface Emulator, for the examples and a bare handler;
//  4. crash after the business write, lambdaidem vs Powertools: the chaos
//     package's scenario (chaos.CrashAfterBusinessWrite and
//     chaos.PowertoolsCrashAfterBusinessWrite), duplicates counted;
//  5. capacity units per request (what DynamoDB bills, computed by the
//     ddbtest proxy) and cost per million requests at on-demand prices, at
//     outcome sizes of 1, 16 and 64 KB, lambdaidem beside Powertools.
//
// Run it with `make bench`, or after `npm ci` in dev/bench/powertools, from
// the bench module (paths are relative to -root, the repository root):
//
//	cd dev && go run ./bench/cmd/bench -root ..
//
// Everything listens on 127.0.0.1 and every loop is bounded.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is what the flags set.
type config struct {
	root        string
	out         string
	chart       string
	nodeDir     string
	rie         string
	requests    int
	contenders  int
	warmup      int
	baseline    int
	sleep       time.Duration
	latencies   []time.Duration
	starts      int
	benchtime   string
	benchCount  int
	crashKeys   int
	capRequests int
	skip        map[string]bool
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	var c config
	var latencies, skip string
	flag.StringVar(&c.root, "root", ".", "repository root")
	flag.StringVar(&c.out, "out", "dev/bench/RESULTS.md", "results file (Markdown)")
	flag.StringVar(&c.chart, "chart", "dev/bench/latency.png", "latency chart (PNG)")
	flag.StringVar(&c.nodeDir, "powertools", "dev/bench/powertools", "folder of the Powertools peer (after npm ci)")
	flag.StringVar(&c.rie, "rie", defaultRIE(), "aws-lambda-rie binary")
	flag.IntVar(&c.requests, "requests", 200, "first requests, and duplicates, per scenario and latency")
	flag.IntVar(&c.contenders, "contenders", 50, "concurrent duplicates of one new key")
	flag.IntVar(&c.warmup, "warmup", 20, "unmeasured requests per scenario before each latency setting")
	flag.IntVar(&c.baseline, "baseline", 100, "plain GetItem calls per SDK for the baseline")
	flag.DurationVar(&c.sleep, "handler-sleep", 50*time.Millisecond, "handler work in the concurrent phase")
	flag.StringVar(&latencies, "latency", "0ms,5ms", "per-call latencies added by the proxy")
	flag.IntVar(&c.starts, "starts", 9, "cold starts per bootstrap under the RIE")
	flag.StringVar(&c.benchtime, "benchtime", "500ms", "go test -benchtime for the micro benchmarks")
	flag.IntVar(&c.benchCount, "count", 5, "runs of the micro benchmarks (the median and the fastest are reported)")
	flag.IntVar(&c.crashKeys, "crash-keys", 20, "keys crashed after the business write, per system")
	flag.IntVar(&c.capRequests, "capacity-requests", 20, "first requests, and duplicates, per scenario and outcome size in the capacity part")
	flag.StringVar(&skip, "skip", "", "comma-separated parts to skip: roundtrip, micro, coldstart, crash, capacity")
	flag.Parse()
	for _, s := range strings.Split(latencies, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			log.Fatalf("bad -latency %q", s)
		}
		c.latencies = append(c.latencies, d)
	}
	c.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.skip[s] = true
		}
	}
	if c.requests < 1 || c.requests > 10_000 || c.contenders < 1 || c.contenders > 1000 || c.starts < 1 || c.starts > 100 || c.crashKeys < 1 || c.crashKeys > 500 || c.capRequests < 1 || c.capRequests > 1000 {
		log.Fatal("-requests, -contenders, -starts, -crash-keys or -capacity-requests out of range")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	if err := run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

func defaultRIE() string {
	if home, err := os.UserHomeDir(); err == nil {
		return home + "/go/bin/aws-lambda-rie"
	}
	return "aws-lambda-rie"
}

// run runs every part not skipped and writes the results.
func run(ctx context.Context, c config) error {
	if err := os.Chdir(c.root); err != nil {
		return err
	}
	c.root = "." // every path below is relative to the repository root
	started := time.Now()
	rep := &report{env: describeMachine(ctx, c), started: started}

	ep, err := startEndpoint()
	if err != nil {
		return err
	}
	defer ep.close()

	if !c.skip["roundtrip"] {
		log.Print("round trips and latency")
		rt, err := runRoundTrips(ctx, c, ep)
		if err != nil {
			return fmt.Errorf("round trips: %w", err)
		}
		rep.roundtrip = rt
	}
	if !c.skip["micro"] {
		log.Print("CPU and allocations (go test -bench ./dev/bench/micro)")
		m, err := runMicro(ctx, c)
		if err != nil {
			return fmt.Errorf("micro benchmarks: %w", err)
		}
		rep.micro = m
	}
	if !c.skip["coldstart"] {
		log.Print("cold start")
		cs, err := runColdStart(ctx, c, ep)
		if err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
		rep.coldstart = cs
	}
	if !c.skip["crash"] {
		log.Print("crash after the business write")
		cr, err := runCrash(ctx, c)
		if err != nil {
			return fmt.Errorf("crash after the business write: %w", err)
		}
		rep.crash = cr
	}
	if !c.skip["capacity"] {
		log.Print("capacity units and cost per request")
		cp, err := runCapacity(ctx, c, ep)
		if err != nil {
			return fmt.Errorf("capacity: %w", err)
		}
		rep.capacity = cp
	}
	rep.finished = time.Now()
	rep.env.loadEnd = loadAverage()
	if err := rep.writeChart(c.chart); err != nil {
		return err
	}
	if err := rep.writeMarkdown(c.out, c); err != nil {
		return err
	}
	log.Printf("wrote %s and %s in %v", c.out, c.chart, time.Since(started).Round(time.Second))
	return nil
}
