package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// sample is one reading of the soak's process.
type sample struct {
	at         time.Duration
	heapMiB    float64 // live heap after a GC
	goroutines int
	ops        int64
}

// soakResult is what the soak saw.
type soakResult struct {
	duration   time.Duration
	samples    []sample
	base       int // goroutines before the traffic
	after      int // goroutines once it stopped (idle connections included)
	renewers   int // renewal goroutines once it stopped
	maxRenew   int // renewal goroutines at the busiest sample
	ops        map[string]int64
	answers    map[string]int64
	renewals   int64
	reconciles int64
}

// The kinds of traffic, with their shares in percent.
var kinds = []struct {
	name  string
	share int
}{{"new key", 50}, {"duplicate", 20}, {"in-flight conflict", 10}, {"renewal", 10}, {"reconcile", 10}}

const keySpace = 16384 // keys per kind; with a 10s horizon they come back fresh

func runSoak(ctx context.Context, c config, ep *child, res *results) error {
	e, err := newEnv(ctx, ep.urls)
	if err != nil {
		return err
	}
	g, err := lambdaidem.New(e.store, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.LeaseMargin = 100 * time.Millisecond
		o.RetryHorizon = 10 * time.Second
		o.CacheSize = 512
		o.Logger = quiet
	})
	if err != nil {
		return err
	}
	sr := &soakResult{ops: map[string]int64{}, answers: map[string]int64{}}
	var mu sync.Mutex
	count := func(kind string, err error) {
		answer := "ok"
		switch {
		case err == nil:
		case errors.Is(err, lambdaidem.ErrInProgress):
			answer = "in progress"
		case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
			answer = "outcome unknown"
		case errors.Is(err, lambdaidem.ErrLeaseLost):
			answer = "lease lost"
		case errors.Is(err, errDeclined):
			answer = "handler error"
		case errors.Is(err, context.Canceled):
			answer = "attempt cancelled: its lease was lost under load" // BeginExternal refused
		case errors.Is(err, context.DeadlineExceeded):
			answer = "invocation deadline passed in a store call" // a loaded machine; fails closed
		default:
			answer = "other error"
			log.Printf("soak: %s: %v", kind, err)
		}
		mu.Lock()
		sr.ops[kind]++
		sr.answers[answer]++
		mu.Unlock()
	}
	var total atomic.Int64
	var reconciles atomic.Int64
	renews0 := e.store.renews.Load()

	time.Sleep(time.Second) // closed connections' goroutines wind down
	runtime.GC()
	sr.base = runtime.NumGoroutine()
	started := time.Now()
	end := started.Add(c.soak)
	read := func() sample {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return sample{at: time.Since(started), heapMiB: float64(m.HeapAlloc) / (1 << 20), goroutines: runtime.NumGoroutine(), ops: total.Load()}
	}
	sr.samples = append(sr.samples, read())
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		t := time.NewTicker(c.sample)
		defer t.Stop()
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s := read()
				sr.samples = append(sr.samples, s)
				sr.maxRenew = max(sr.maxRenew, renewers())
				if len(sr.samples)%12 == 0 {
					log.Printf("soak: %v: heap %.1f MiB, %d goroutines, %d ops", s.at.Round(time.Second), s.heapMiB, s.goroutines, s.ops)
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for slot := range c.concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(slot), 42))
			last := ""
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				pick, kind := rng.IntN(100), ""
				for _, k := range kinds {
					if pick < k.share {
						kind = k.name
						break
					}
					pick -= k.share
				}
				key := func(prefix string) string { return fmt.Sprintf("%s-%d", prefix, rng.IntN(keySpace)) }
				switch kind {
				case "new key":
					last = key("n")
					count(kind, soakCall(ctx, e, g, last, time.Second, 0, nil))
				case "duplicate":
					if last == "" {
						last = key("n")
					}
					count(kind, soakCall(ctx, e, g, last, time.Second, 0, nil))
				case "in-flight conflict":
					k := key("c")
					var inner sync.WaitGroup
					for range 2 {
						inner.Go(func() { count(kind, soakCall(ctx, e, g, k, time.Second, 20*time.Millisecond, nil)) })
					}
					inner.Wait()
				case "renewal":
					// A deadline of 500ms and a margin of 100ms: the 1s
					// handler renews once or twice.
					count(kind, soakCall(ctx, e, g, key("r"), 500*time.Millisecond, time.Second, nil))
				case "reconcile":
					k := key("u")
					count(kind, soakCall(ctx, e, g, k, time.Second, 0, errDeclined)) // UNKNOWN
					rec := func(context.Context, lambdaidem.Unknown) (string, bool, error) {
						reconciles.Add(1)
						return "reconciled", true, nil
					}
					count(kind, soakReconcile(ctx, g, k, rec))
				}
				total.Add(1)
			}
		})
	}
	wg.Wait()
	<-samplerDone
	sr.duration = time.Since(started)
	sr.samples = append(sr.samples, read())
	// Every attempt has ended: so must every renewal goroutine. (The
	// goroutine count also holds the HTTP clients' idle connections.)
	sr.after = runtime.NumGoroutine()
	sr.renewers = renewers()
	sr.renewals = e.store.renews.Load() - renews0
	sr.reconciles = reconciles.Load()
	res.soak = sr
	return nil
}

// renewers counts the goroutines running a lease renewal loop.
func renewers() int {
	buf := make([]byte, 8<<20)
	n := runtime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "lambdaidem.(*op[...]).keepAlive")
}

var errDeclined = errors.New("provider timed out after the charge began")

// soakCall is one invocation: the handler works for work (ignoring ctx),
// and either stages its payment or, with fail set, begins an external
// effect and fails ambiguously.
func soakCall(ctx context.Context, e *env, g *lambdaidem.Guard, key string, deadline, work time.Duration, fail error) error {
	ictx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	_, err := lambdaidem.Do(ictx, g, lambdaidem.Call[string]{Operation: "Pay", Key: key, Fingerprint: "fp"}, func(ctx context.Context) (string, error) {
		if work > 0 {
			time.Sleep(work)
		}
		if fail != nil {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				return "", err
			}
			return "", fail
		}
		return "paid", stagePut(ctx, key)
	})
	return err
}

func soakReconcile(ctx context.Context, g *lambdaidem.Guard, key string, rec func(context.Context, lambdaidem.Unknown) (string, bool, error)) error {
	ictx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := lambdaidem.Do(ictx, g, lambdaidem.Call[string]{Operation: "Pay", Key: key, Fingerprint: "fp", Reconcile: rec}, func(ctx context.Context) (string, error) {
		return "paid", stagePut(ctx, key)
	})
	return err
}
