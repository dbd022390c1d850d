package chaos_test

import (
	"context"
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/dev/chaos"
)

var (
	seedFlag = flag.Uint64("seed", 0, "chaos: the seed of the fault plan (default $CHAOS_SEED, else 1)")
	opsFlag  = flag.Int("ops", 0, "chaos: operations per run (default: the bounded size of each test)")
)

// config is the bounded run's configuration, with -seed/$CHAOS_SEED and
// -ops applied.
func config(t *testing.T, ops int) chaos.Config {
	t.Helper()
	cfg := chaos.Config{Seed: *seedFlag, Ops: ops}
	if cfg.Seed == 0 {
		if s := os.Getenv("CHAOS_SEED"); s != "" {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("CHAOS_SEED=%q: %v", s, err)
			}
			cfg.Seed = n
		}
	}
	if *opsFlag > 0 {
		cfg.Ops = *opsFlag
	}
	return cfg
}

func check(t *testing.T, rep *chaos.Report, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.String())
	if !rep.OK() {
		t.Errorf("%d violations; rerun with -seed %d", len(rep.Violations), rep.Seed)
	}
}

// TestMemstoreChaos: thousands of operations by 16 instances on 9 keys,
// half of them with a fault, against the in-memory store: every key ends
// with exactly one effect, every success reports that effect, and no
// record is left in progress or unknown.
func TestMemstoreChaos(t *testing.T) {
	rep, err := chaos.Run(context.Background(), chaos.NewMemBackend(), config(t, 3000))
	check(t, rep, err)
}

// TestDynamoDBChaos: the same against the DynamoDB store over the real
// SDK, on the in-process emulator behind the fidelity proxy, with lost
// responses and bursts played under the SDK. The business items and the
// records are read back with a Scan.
func TestDynamoDBChaos(t *testing.T) {
	ctx := context.Background()
	b, err := chaos.NewDynamoBackend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rep, err := chaos.Run(ctx, b, config(t, 1500))
	check(t, rep, err)
}

// TestChecksFindNonAtomicDuplicates is the control: with business writes
// made directly in the handler, outside the record's commit (the pattern of
// Powertools' idempotency utility), an instance that dies between the
// business write and the commit leaves an effect, the retry makes another,
// and the checks must report duplicates.
func TestChecksFindNonAtomicDuplicates(t *testing.T) {
	cfg := config(t, 600)
	cfg.Faults = []chaos.Fault{chaos.CrashBeforeCommit}
	cfg.FaultRate = 0.2
	rep, err := chaos.Run(context.Background(), chaos.NewDirectMemBackend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if rep.Duplicates == 0 || rep.Fired[chaos.CrashBeforeCommit.String()] == 0 {
		t.Errorf("control run found %d duplicates after %d crashes before the commit; the checks cannot see duplicates",
			rep.Duplicates, rep.Fired[chaos.CrashBeforeCommit.String()])
	}
}

// TestLinearizabilityCatchesUnfencedCommit is the control of the
// linearizability check: with a store whose commit is not fenced, an
// attempt whose lease lapsed commits over the new owner's outcome, and the
// history (two different successful answers for one key) has no
// linearization.
func TestLinearizabilityCatchesUnfencedCommit(t *testing.T) {
	cfg := config(t, 600)
	cfg.Faults = []chaos.Fault{chaos.LeaseLapse}
	cfg.FaultRate = 0.2
	rep, err := chaos.Run(context.Background(), chaos.NewUnfencedMemBackend(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if rep.Linearizable || rep.Fired[chaos.LeaseLapse.String()] == 0 {
		t.Errorf("the checker accepted the history of an unfenced store after %d lease lapses; it cannot see a broken store",
			rep.Fired[chaos.LeaseLapse.String()])
	}
}

// TestCrashAfterBusinessWrite: an instance that dies after its handler's
// business write and before the outcome is saved leaves no effect behind
// with lambdaidem (the write commits with the record, or not at all), so
// the retry's effect is the only one. Beside it, the same scenario against
// Powertools (TypeScript), when node and the bench peer's modules are
// installed, for the record: there the retry writes a second item.
func TestCrashAfterBusinessWrite(t *testing.T) {
	ctx := context.Background()
	b, err := chaos.NewDynamoBackend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ours, err := chaos.CrashAfterBusinessWrite(ctx, b, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(ours)
	if ours.Duplicates != 0 || ours.Mismatched != 0 || ours.Errors != 0 || ours.Effects != ours.Keys {
		t.Errorf("want one effect per key and identical answers: %v", ours)
	}

	if testing.Short() {
		t.Skip("-short: the Powertools side spawns node processes")
	}
	dir, err := chaos.PowertoolsDir()
	if err != nil {
		t.Skipf("Powertools side skipped: %v", err)
	}
	theirs, err := chaos.PowertoolsCrashAfterBusinessWrite(ctx, dir, "powertools/crash.mjs", 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(theirs)
	if theirs.Keys > 0 && theirs.Effects < theirs.Keys {
		t.Errorf("the Powertools run lost effects: %v", theirs)
	}
}
