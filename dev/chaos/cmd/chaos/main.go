// Command chaos runs the randomized fault-injection harness for long runs
// (make chaos): against the in-memory store, the DynamoDB store over the
// real SDK on the in-process emulator, or an endpoint given by -endpoint,
// and optionally the crash-after-business-write comparison with Powertools
// (TypeScript). It prints the figures and exits 1 on any violation.
//
//	cd dev/chaos && go run ./cmd/chaos -ops 20000 -seed 7
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dev/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg := chaos.Config{}
	flag.Uint64Var(&cfg.Seed, "seed", 0, "seed of the fault plan (default $CHAOS_SEED, else 1)")
	flag.IntVar(&cfg.Ops, "ops", 20000, "operations per backend")
	flag.IntVar(&cfg.Workers, "workers", 16, "concurrent workers (Lambda instances)")
	flag.IntVar(&cfg.Keys, "keys", 9, "keys contended for at a time")
	flag.Float64Var(&cfg.FaultRate, "rate", 0.5, "share of operations that draw a fault")
	flag.BoolVar(&cfg.Outbox, "outbox", false, "every run also stages an outbox message, and a relay publishes them (checked, and in the linearizability model)")
	backends := flag.String("backend", "all", "memstore, dynamo, emulator (dynamo with the emulator's departures), or all")
	endpoint := flag.String("endpoint", "", "a DynamoDB-compatible endpoint instead of the in-process emulator")
	powertools := flag.Int("powertools", 20, "keys for the crash-after-business-write comparison with Powertools (0: skip)")
	flag.Parse()
	if cfg.Seed == 0 {
		if s := os.Getenv("CHAOS_SEED"); s != "" {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "CHAOS_SEED=%q: %v\n", s, err)
				return 2
			}
			cfg.Seed = n
		}
	}
	ctx := context.Background()
	failed := false
	runOne := func(b chaos.Backend) {
		rep, err := chaos.Run(ctx, b, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %s: %v\n", b.Name(), err)
			failed = true
			return
		}
		fmt.Println(rep)
		failed = failed || !rep.OK()
	}
	newDynamo := func(dep ddbtest.Departures) *chaos.DynamoBackend {
		b, err := chaos.NewDynamoBackend(ctx, func(o *chaos.DynamoOptions) { o.URL = *endpoint; o.Departures = dep })
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			failed = true
			return nil
		}
		return b
	}
	all := *backends == "all"
	if all || *backends == "memstore" {
		runOne(chaos.NewMemBackend())
	}
	if all || *backends == "dynamo" {
		if b := newDynamo(ddbtest.Departures{}); b != nil {
			runOne(b)
			b.Close()
		}
	}
	if (all && *endpoint == "") || *backends == "emulator" {
		if b := newDynamo(ddbtest.Emulator()); b != nil {
			runOne(b)
			b.Close()
		}
	}
	if *powertools > 0 {
		if b := newDynamo(ddbtest.Departures{}); b != nil {
			ours, err := chaos.CrashAfterBusinessWrite(ctx, b, *powertools)
			b.Close()
			if err != nil {
				fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
				return 1
			}
			fmt.Println(ours)
			failed = failed || ours.Duplicates > 0 || ours.Mismatched > 0
		}
		dir, err := chaos.PowertoolsDir()
		if err != nil {
			fmt.Printf("Powertools comparison skipped: %v\n", err)
		} else {
			script := filepath.Join(filepath.Dir(dir), "..", "chaos", "powertools", "crash.mjs")
			theirs, err := chaos.PowertoolsCrashAfterBusinessWrite(ctx, dir, script, *powertools)
			if err != nil {
				fmt.Fprintf(os.Stderr, "chaos: Powertools: %v\n", err)
			} else {
				fmt.Println(theirs)
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}
