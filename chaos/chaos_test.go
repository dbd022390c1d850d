package chaos_test

import (
	"context"
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/chaos"
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
