package main

import (
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	serveIfChild() // the endpoint process is this test binary too
	os.Exit(m.Run())
}

// TestShortSoak is the soak, bounded to a few seconds: every kind of
// traffic runs, nothing fails in a way the traffic does not explain, and
// every goroutine (renewals included) ends with its attempt. `make
// bench-managed` runs the ten-minute soak.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 64 emulators")
	}
	c := config{latency: time.Millisecond, concurrency: 16, soak: 3 * time.Second, sample: 500 * time.Millisecond}
	ep, err := startChild(t.Context(), c.latency)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.close()
	res := &results{}
	if err := runSoak(t.Context(), c, ep, res); err != nil {
		t.Fatal(err)
	}
	s := res.soak
	t.Logf("ops %v, answers %v, renewals %d, reconciles %d, goroutines %d before and %d after, renewal goroutines %d after (at most %d)", s.ops, s.answers, s.renewals, s.reconciles, s.base, s.after, s.renewers, s.maxRenew)
	for _, k := range kinds {
		if s.ops[k.name] == 0 {
			t.Errorf("no %s traffic ran", k.name)
		}
	}
	if s.answers["other error"] != 0 || s.renewals == 0 || s.reconciles == 0 {
		t.Errorf("answers %v, %d renewals, %d reconciliations; want no unexplained error, renewals and reconciliations", s.answers, s.renewals, s.reconciles)
	}
	if s.renewers != 0 || s.maxRenew == 0 {
		t.Errorf("%d renewal goroutines after the traffic (at most %d during it); want 0 after, some during", s.renewers, s.maxRenew)
	}
	if len(s.samples) < 3 {
		t.Errorf("%d samples", len(s.samples))
	}
}
