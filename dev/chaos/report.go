package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is what a run saw.
type Report struct {
	Backend             string
	Seed                uint64
	Ops, Workers, Keys  int
	Requests            int
	Duration            time.Duration
	Planned, Fired      map[string]int // faults by kind
	Outcomes            map[string]int // requests by outcome class
	RefusedCalls        int            // store calls refused by bursts
	Conflicts           int            // writes the endpoint refused for a transaction conflict
	ClockJumps          int            // lease lapses of the shared clock
	AbandonedClaims     int            // INPROGRESS records at quiescence
	UnknownAtQuiescence int            // UNKNOWN records at quiescence
	DrainRetries        int
	DownstreamCalls     int
	DownstreamDeduped   int
	StoreCalls          map[string]int
	Duplicates, Lost    int
	Mismatched, Stuck   int
	// Unclassified counts requests that ended in an error matching none of
	// the conditions a caller can act on (an adapter's HTTP 500).
	Unclassified int
	// OutboxDeliveries is how many outbox messages the relay published
	// (Config.Outbox), OutboxRepublished how many of them repeated an id
	// already published (a crash or a lost answer between publish and
	// mark): a consumer deduplicates those on the id.
	OutboxDeliveries, OutboxRepublished int
	// Checked is how many requests (and end-of-run reads) the
	// linearizability check verified; Linearizable is its verdict.
	Checked      int
	Linearizable bool
	Violations   []string
}

// OK reports whether the run found no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// String renders the figures.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run: backend %s, seed %d, %d operations, %d workers, %d keys, %v\n",
		r.Backend, r.Seed, r.Ops, r.Workers, r.Keys, r.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "  faults (fired/planned):\n")
	for _, name := range sortedKeys(r.Planned) {
		fmt.Fprintf(&b, "    %-22s %6d / %d\n", name, r.Fired[name], r.Planned[name])
	}
	fmt.Fprintf(&b, "    %-22s %6d\n", "store calls refused", r.RefusedCalls)
	fmt.Fprintf(&b, "    %-22s %6d\n", "clock jumps", r.ClockJumps)
	fmt.Fprintf(&b, "    %-22s %6d\n", "transaction conflicts", r.Conflicts)
	fmt.Fprintf(&b, "  outcomes:\n")
	for _, name := range sortedKeys(r.Outcomes) {
		fmt.Fprintf(&b, "    %-22s %6d\n", name, r.Outcomes[name])
	}
	fmt.Fprintf(&b, "  at quiescence: %d abandoned claims (INPROGRESS), %d UNKNOWN; drain: %d requests\n",
		r.AbandonedClaims, r.UnknownAtQuiescence, r.DrainRetries)
	fmt.Fprintf(&b, "  downstream: %d calls, %d deduplicated by the operation key\n", r.DownstreamCalls, r.DownstreamDeduped)
	fmt.Fprintf(&b, "  store calls:")
	for _, name := range sortedKeys(r.StoreCalls) {
		fmt.Fprintf(&b, " %s=%d", name, r.StoreCalls[name])
	}
	fmt.Fprintf(&b, "\n  duplicates %d, lost %d, mismatched responses %d, stuck records %d, unclassified errors (500) %d\n",
		r.Duplicates, r.Lost, r.Mismatched, r.Stuck, r.Unclassified)
	if r.OutboxDeliveries > 0 {
		fmt.Fprintf(&b, "  outbox: %d messages published, %d of them again with the same id\n", r.OutboxDeliveries, r.OutboxRepublished)
	}
	fmt.Fprintf(&b, "  linearizability (porcupine, per key, against the contract): %d operations, linearizable %v\n",
		r.Checked, r.Linearizable)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  VIOLATION: %s\n", v)
	}
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
