package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// CrashResult is what one system did in the crash-after-business-write
// scenario: for each key, one invocation dies after its handler wrote the
// business item and before the outcome was saved; once its lease has
// lapsed the client retries, then retries once more.
type CrashResult struct {
	System string
	// Keys is how many operations were crashed and retried.
	Keys int
	// Effects counts business items in the table; one per key is right.
	Effects int
	// Duplicates is Effects beyond one per key.
	Duplicates int
	// Mismatched counts keys whose two retries got different answers, or
	// an answer that is not the committed effect.
	Mismatched int
	// Errors counts retries that failed.
	Errors int
}

func (r CrashResult) String() string {
	return fmt.Sprintf("%s: %d keys crashed after the business write, %d business items, %d duplicates, %d mismatched answers, %d failed retries",
		r.System, r.Keys, r.Effects, r.Duplicates, r.Mismatched, r.Errors)
}

// CrashAfterBusinessWrite runs the scenario against lambdaidem over b,
// claim-first: the handler stages its business write, and the instance
// dies before the commit (the same point in the program as a Powertools
// handler dying after its PutItem: past the business write, before the
// outcome is saved).
func CrashAfterBusinessWrite(ctx context.Context, b Backend, keys int) (CrashResult, error) {
	cfg := Config{Keys: 3, Workers: 1, Ops: 1}
	if err := cfg.setDefaults(); err != nil {
		return CrashResult{}, err
	}
	r := &run{cfg: cfg, backend: b, down: downstream{first: map[string]string{}, opKeys: map[string]map[string]bool{}}, hist: newHistory()}
	if bi, ok := b.(backendInit); ok {
		bi.init(&r.bursts)
	}
	r.store = &crashStore{inner: b.Store(), lose: !b.LosesResponses()}
	in, err := r.newInstance(0, false)
	if err != nil {
		return CrashResult{}, err
	}
	res := CrashResult{System: "lambdaidem (" + b.Name() + ")", Keys: keys}
	answers := map[string][]Receipt{}
	for i := 0; i < keys; i++ {
		key := fmt.Sprintf("crash-%d", i)
		p := &plan{fault: CrashBeforeCommit}
		if _, err := r.invoke(ctx, in, 0, key, "crash", p); !errors.Is(err, errCrashed) {
			return res, fmt.Errorf("chaos: %s: the crashed invocation returned %v", key, err)
		}
		r.lapse() // the client retries after the Lambda timeout
		for try := 0; try < 2; try++ {
			out, err := r.invoke(ctx, in, 0, key, fmt.Sprintf("retry%d", try), nil)
			if err != nil {
				res.Errors++
				continue
			}
			answers[key] = append(answers[key], out)
		}
	}
	snap, err := b.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	tally(&res, snap.Effects, answers)
	return res, nil
}

func tally(res *CrashResult, effects map[string][]string, answers map[string][]Receipt) {
	for _, runs := range effects {
		res.Effects += len(runs)
		if len(runs) > 1 {
			res.Duplicates += len(runs) - 1
		}
	}
	for key, as := range answers {
		for _, a := range as {
			if a != as[0] || a.Key != key || !slices.Contains(effects[key], a.Run) {
				res.Mismatched++
				break
			}
		}
	}
}

// PowertoolsDir finds bench/powertools (with its node_modules) from the
// working directory or its parents, or reports why it cannot run.
func PowertoolsDir() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node is not installed")
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 6 {
		for _, pt := range []string{filepath.Join(dir, "bench", "powertools"), filepath.Join(dir, "dev", "bench", "powertools")} {
			if _, err := os.Stat(filepath.Join(pt, "node_modules", "@aws-lambda-powertools", "idempotency")); err == nil {
				return pt, nil
			}
		}
		dir = filepath.Dir(dir)
	}
	return "", errors.New("dev/bench/powertools/node_modules has no @aws-lambda-powertools/idempotency (run npm ci there)")
}

// PowertoolsCrashAfterBusinessWrite runs the scenario against Powertools
// for AWS Lambda (TypeScript): each invocation is a node process running
// script (chaos/powertools/crash.mjs) with the modules of ptDir (see
// [PowertoolsDir]), against the same emulator and proxy over loopback. The crashed process exits
// after its PutItem; after the lease it set from the remaining time has
// lapsed, two retries follow.
func PowertoolsCrashAfterBusinessWrite(ctx context.Context, ptDir, script string, keys int) (CrashResult, error) {
	b, err := NewDynamoBackend(ctx)
	if err != nil {
		return CrashResult{}, err
	}
	defer b.Close()
	res := CrashResult{System: "Powertools for AWS Lambda (TypeScript) idempotency", Keys: keys}
	const timeout = 800 * time.Millisecond
	invoke := func(key string, crash bool) (Receipt, error) {
		cmd := exec.CommandContext(ctx, "node", script)
		cmd.Env = append(os.Environ(),
			"CHAOS_POWERTOOLS_DIR="+ptDir, "CHAOS_ENDPOINT="+b.endpoint.URL,
			"CHAOS_IDEMPOTENCY_TABLE="+b.table, "CHAOS_BUSINESS_TABLE="+b.effects,
			"CHAOS_KEY="+key, "CHAOS_TIMEOUT_MS="+strconv.Itoa(int(timeout.Milliseconds())))
		if crash {
			cmd.Env = append(cmd.Env, "CHAOS_CRASH=after-business-write")
		}
		out, err := cmd.Output()
		if crash {
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 137 {
				return Receipt{}, fmt.Errorf("chaos: the crashing invocation of %s did not exit with 137: %v %s", key, err, out)
			}
			return Receipt{}, nil
		}
		if err != nil {
			return Receipt{}, fmt.Errorf("chaos: node %s: %w: %s", script, err, exitStderr(err))
		}
		var ans struct {
			Result *Receipt
			Error  string
		}
		if err := json.Unmarshal(out, &ans); err != nil || ans.Result == nil {
			return Receipt{}, fmt.Errorf("chaos: invocation of %s: %s (%v)", key, out, err)
		}
		return *ans.Result, nil
	}
	// Each wave runs every key at once, as separate Lambda instances.
	wave := func(crash bool, answers map[string][]Receipt) error {
		var mu sync.Mutex
		var wg sync.WaitGroup
		var first error
		for i := 0; i < keys; i++ {
			key := fmt.Sprintf("crash-%d", i)
			wg.Go(func() {
				out, err := invoke(key, crash)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil && crash && first == nil:
					first = err
				case err != nil:
					res.Errors++
				case !crash:
					answers[key] = append(answers[key], out)
				}
			})
		}
		wg.Wait()
		return first
	}
	answers := map[string][]Receipt{}
	if err := wave(true, answers); err != nil {
		return res, err
	}
	time.Sleep(timeout + 300*time.Millisecond) // the crashed invocations' leases lapse
	for range 2 {
		if err := wave(false, answers); err != nil {
			return res, err
		}
	}
	snap, err := b.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	tally(&res, snap.Effects, answers)
	return res, nil
}

func exitStderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
