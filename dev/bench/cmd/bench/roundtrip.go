package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The phases of a latency setting.
const (
	phaseFirst      = "first request"
	phaseDuplicate  = "duplicate (completed)"
	phaseConcurrent = "concurrent duplicates"
)

func phaseOrder() []string { return []string{phaseFirst, phaseDuplicate, phaseConcurrent} }

// phaseResult is one scenario's figures in one phase.
type phaseResult struct {
	scenario string
	sdk      string
	n        int
	lat      []time.Duration
	calls    map[string]int // by operation, all requests together
	ran      int            // handler bodies run in this phase
	outcomes map[string]int // "ok", "in progress", or an error
}

func (p *phaseResult) total() int {
	n := 0
	for _, c := range p.calls {
		n += c
	}
	return n
}

func (p *phaseResult) perRequest() float64 { return float64(p.total()) / float64(p.n) }

func (p *phaseResult) errors() int { return p.n - p.outcomes["ok"] }

// dist is a latency distribution summary.
type dist struct{ p50, p95 time.Duration }

func summarize(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1 // nearest rank
		return s[min(max(i, 0), len(s)-1)]
	}
	return dist{p50: rank(0.50), p95: rank(0.95)}
}

// latencyRun is every phase at one added per-call latency.
type latencyRun struct {
	latency  time.Duration
	baseline map[string]dist // by SDK: one plain GetItem
	phases   map[string][]*phaseResult
}

// roundTrips is part 1 of the results.
type roundTrips struct {
	scenarios []string
	runs      []latencyRun
	versions  map[string]string
}

func runRoundTrips(ctx context.Context, c config, ep *endpoint) (*roundTrips, error) {
	client := ep.client()
	if err := ep.createTables(ctx, client, len(c.latencies)*shardsPerLatency(c)); err != nil {
		return nil, err
	}
	peer, stop, err := startNode(ctx, c.nodeDir, ep.url)
	if err != nil {
		return nil, err
	}
	defer stop()

	scenarios := []scenario{
		bareScenario(client),
		lambdaidemScenario(scClaimFirst, client, lambdaidem.ClaimFirst, 0),
		lambdaidemScenario(scOptimistic, client, lambdaidem.Optimistic, 0),
		lambdaidemScenario(scCached, client, lambdaidem.ClaimFirst, 4096),
		windowScenario(client),
		&nodeScenario{peer: peer},
	}
	baselines := map[string]baseliner{"go": goBaseline{client}, "node": nodeBaseline{peer}}
	txBaseline := goTxBaseline{client}

	rt := &roundTrips{versions: map[string]string{
		"node":                               nodeVersion(ctx),
		"@aws-lambda-powertools/idempotency": npmVersion(c.nodeDir, "@aws-lambda-powertools/idempotency"),
		"@aws-sdk/client-dynamodb":           npmVersion(c.nodeDir, "@aws-sdk/client-dynamodb"),
		"@aws-sdk/lib-dynamodb":              npmVersion(c.nodeDir, "@aws-sdk/lib-dynamodb"),
	}}
	for _, s := range scenarios {
		rt.scenarios = append(rt.scenarios, s.name())
	}
	for _, lat := range c.latencies {
		log.Printf("  %v per call", lat)
		ep.proxy.SetLatency(lat)
		run, err := runLatency(ctx, c, ep, lat, len(rt.runs)*shardsPerLatency(c), scenarios, baselines, txBaseline)
		if err != nil {
			return nil, fmt.Errorf("%v per call: %w", lat, err)
		}
		rt.runs = append(rt.runs, run)
	}
	ep.proxy.SetLatency(0)
	return rt, nil
}

// key names a payment uniquely per scenario, latency and phase.
func key(si int, lat time.Duration, phase string, i int) string {
	return fmt.Sprintf("s%d-%dms-%s-%d", si, lat.Milliseconds(), phase, i)
}

// shardsPerLatency is how many table shards one latency setting uses: one
// for the warm-up and baselines, one per shardSize requests, one for the
// concurrent phase.
func shardsPerLatency(c config) int { return 2 + (c.requests+shardSize-1)/shardSize }

func runLatency(ctx context.Context, c config, ep *endpoint, lat time.Duration, shard0 int, scenarios []scenario, baselines map[string]baseliner, txBaseline baseliner) (latencyRun, error) {
	run := latencyRun{latency: lat, baseline: map[string]dist{}, phases: map[string][]*phaseResult{}}
	warmShard, burstShard := shard0, shard0+shardsPerLatency(c)-1
	shardOf := func(i int) int { return shard0 + 1 + i/shardSize }

	// Warm up: connections, JIT, caches; not measured.
	for i := range c.warmup {
		for si, s := range scenarios {
			ev := payment{ID: key(si, lat, "warm", i), Amount: 100, Currency: "EUR", Shard: warmShard}
			for range 2 { // a first request and a duplicate
				if _, err := s.invoke(ctx, ev); err != nil {
					return run, fmt.Errorf("warm-up %s: %w", s.name(), err)
				}
			}
		}
	}

	// Baseline: one plain GetItem per SDK, interleaved.
	sdks := slices.Sorted(maps.Keys(baselines))
	samples := map[string][]time.Duration{}
	for i := range c.baseline {
		for _, sdk := range sdks {
			d, err := baselines[sdk].call(ctx, warmShard, "payment#"+key(0, lat, "warm", i%max(c.warmup, 1)))
			if err != nil {
				return run, fmt.Errorf("baseline %s: %w", sdk, err)
			}
			samples[sdk] = append(samples[sdk], d)
		}
	}
	for sdk, s := range samples {
		run.baseline[sdk] = summarize(s)
	}

	// First requests, then duplicates of them: sequential, one request of
	// each scenario in turn, so that any drift in the machine's load hits
	// every scenario alike.
	for _, phase := range []string{phaseFirst, phaseDuplicate} {
		results := make([]*phaseResult, len(scenarios))
		before := make([]int, len(scenarios))
		for si, s := range scenarios {
			results[si] = newPhaseResult(s)
			if phase == phaseDuplicate {
				for i := range c.requests {
					n, err := s.ran(ctx, key(si, lat, phaseFirst, i))
					if err != nil {
						return run, err
					}
					before[si] += n
				}
			}
		}
		var tx []time.Duration
		for i := range c.requests {
			for si, s := range scenarios {
				if err := ctx.Err(); err != nil {
					return run, err
				}
				ev := payment{ID: key(si, lat, phaseFirst, i), Amount: 100 + int64(i), Currency: "EUR", Shard: shardOf(i)}
				calls0 := ep.proxy.Calls()
				d, err := s.invoke(ctx, ev)
				results[si].add(d, err, diff(calls0, ep.proxy.Calls()))
			}
			if phase == phaseFirst {
				// A transaction alone, on tables of the same size, at the same moment.
				d, err := txBaseline.call(ctx, shardOf(i), key(0, lat, "tx", i))
				if err != nil {
					return run, fmt.Errorf("transaction baseline: %w", err)
				}
				tx = append(tx, d)
			}
		}
		if phase == phaseFirst {
			run.baseline["go-tx"] = summarize(tx)
		}
		for si, s := range scenarios {
			total := 0
			for i := range c.requests {
				n, err := s.ran(ctx, key(si, lat, phaseFirst, i))
				if err != nil {
					return run, err
				}
				total += n
			}
			results[si].ran = total - before[si]
		}
		run.phases[phase] = results
	}

	// Concurrent duplicates of one new key, each scenario on its own.
	for si, s := range scenarios {
		r, err := burst(ctx, ep, s, payment{ID: key(si, lat, "burst", 0), Amount: 500, Currency: "EUR", SleepMs: int(c.sleep.Milliseconds()), Shard: burstShard}, c.contenders)
		if err != nil {
			return run, err
		}
		run.phases[phaseConcurrent] = append(run.phases[phaseConcurrent], r)
	}
	return run, nil
}

func newPhaseResult(s scenario) *phaseResult {
	return &phaseResult{scenario: s.name(), sdk: s.sdk(), calls: map[string]int{}, outcomes: map[string]int{}}
}

func (p *phaseResult) add(d time.Duration, err error, calls map[string]int) {
	p.n++
	p.lat = append(p.lat, d)
	for op, n := range calls {
		p.calls[op] += n
	}
	p.outcomes[outcome(err)]++
}

// outcome classifies an invocation's result.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, lambdaidem.ErrInProgress), strings.Contains(err.Error(), "IdempotencyAlreadyInProgressError"):
		return "in progress"
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// diff returns after − before, by operation.
func diff(before, after map[string]int) map[string]int {
	d := map[string]int{}
	for op, n := range after {
		if n -= before[op]; n != 0 {
			d[op] = n
		}
	}
	return d
}

// burst runs n invocations of ev released together, in the scenario's
// runtime, and counts the calls they made.
func burst(ctx context.Context, ep *endpoint, s scenario, ev payment, n int) (*phaseResult, error) {
	r := newPhaseResult(s)
	calls0 := ep.proxy.Calls()
	out, err := s.burst(ctx, ev, n)
	if err != nil {
		return nil, fmt.Errorf("%s: burst: %w", s.name(), err)
	}
	calls := diff(calls0, ep.proxy.Calls())
	for i, o := range out {
		var c map[string]int
		if i == 0 {
			c = calls // the phase's calls, counted once
		}
		r.add(o.d, o.err, c)
	}
	ran, err := s.ran(ctx, ev.ID)
	if err != nil {
		return nil, err
	}
	r.ran = ran
	return r, nil
}
