// Package model replays schedules sampled from the record protocol's
// Promela model (model/record.pml) against the Go code: lambdaidem's core
// and dynamostore over the in-process DynamoDB endpoint (ddbtest), with the
// model's faults injected at the same requests in the same order, and
// checks that the code does what the model did and that the model's
// properties hold of the outcome. See model/README.md.
package model

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The bound the replayed schedules are sampled at: two concurrent attempts
// (the second claim-first or optimistic, either intent), the operator (one
// action: resolve --done, resolve --not-done or forget, through
// dynamostore.Records), the final retry, renewals (an attempt renews or
// not, as the model chooses; under SIM the model renews at the ticks the Go
// renewer's timer fires, RenewFraction 1/2 of the lease, and its renewals
// get no fault: see record.pml's rdue), late writes (a commit whose client
// gave up, landing later: the replay keeps the request until the model's
// "late" event).
var sampleFlags = []string{"-DSIM", "-DNATT=2", "-DLATE=1", "-DOPERATOR=1", "-DFAULTS=2"}

// A tick of the model's clock, and its constants (record.pml).
const (
	tick         = time.Second
	deadlineLen  = 1 * tick // DL
	leaseMargin  = 2 * tick // MARGIN
	skewTicks    = 1        // SKEW
	maxRunTime   = 3 * tick // MAXRUN
	retryHorizon = 2 * tick // RH
	// renewFraction is the Go renewer's RenewFraction the model's SIM
	// timing follows (record.pml's renewEvery: half the lease, rounded up
	// to a tick); 1/2 is exact in floating point
	renewFraction = 0.5
)

// The model's actors: attempts 1..natt, the operator, the final retry.
const (
	natt     = 2
	operator = natt + 1
	final    = natt + 2
)

// The write codes of the model's trace (W_* in record.pml).
const (
	wClaim    = 1
	wClaimPut = 2
	wRelease  = 3
	wCommit   = 4
	wRenew    = 5
	wMarkExt  = 6
	wMarkUnk  = 7
	wDone     = 8  // resolve --done: Records.Resolve, Done
	wNotDone  = 9  // resolve --not-done (Records.Resolve) or forget of an in-progress record nobody runs under
	wForget   = 10 // forget of a completed record (Records.Forget)
)

// The faults (F_* in record.pml).
const (
	fNone      = 0
	fErr       = 1
	fLostErr   = 2
	fLostRetry = 3
	fLate      = 5 // the client gave up; DynamoDB applies the write later (a "late" event)
)

// The kinds of late write (L_* in record.pml).
const (
	lateRenew  = 1
	lateCommit = 2
)

// How an attempt ended (why in record.pml).
const (
	endAnswer     = 1
	endKeyReused  = 2
	endInProgress = 3
	endUnknown    = 4
	endStoreError = 5
	endLeaseLost  = 6
	endHandlerErr = 7
	endStopped    = 8
)

// event is one line "EV <actor> <kind> ..." of a simulation.
type event struct {
	actor int
	kind  string // cfg, tick, final, ttl, late, land, drop, w, get, run, renew, dispatch, handler, commit, reconcile, cancelled, end, opread
	// w: the write, its fault, whether its condition held; resend: the SDK's resend
	code, fault, ok int
	resend          bool
	arg             string         // reconcile: done, notdone, cannottell
	n               int            // tick, final: the time; end: why; opread: the verdict; late: whose write; run: the renewer's first tick (0: none)
	out             int            // end: the outcome
	cfg             map[string]int // cfg: mode, fp, renews, skew
	// w, get, cancelled, opread, ttl, late: the model's record after the
	// event (RECA in record.pml); nil on other events
	rec  *modelRec
	line string
}

func (e event) String() string { return e.line }

// sample runs spin's random simulation of the model with seed and returns
// its events.
func sample(pml string, seed int) ([]event, error) {
	args := append([]string{"-n" + strconv.Itoa(seed)}, sampleFlags...)
	cmd := exec.Command("spin", append(args, pml)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("spin %v: %v\n%s", args, err, out.String())
	}
	if strings.Contains(out.String(), "assertion violated") {
		return nil, fmt.Errorf("spin %v: the model itself violates a property:\n%s", args, out.String())
	}
	return parse(out.String())
}

// parse reads the EV lines of a simulation.
func parse(text string) ([]event, error) {
	var evs []event
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "EV" {
			continue
		}
		a, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("bad event %q", sc.Text())
		}
		e := event{actor: a, kind: f[2], line: strings.Join(f, " ")}
		kv := map[string]int{}
		for _, p := range f[3:] {
			if k, v, ok := strings.Cut(p, "="); ok {
				n, _ := strconv.Atoi(v)
				kv[k] = n
			}
		}
		if _, ok := kv["st"]; ok {
			e.rec = &modelRec{st: kv["st"], tok: kv["tok"], lease: kv["lease"], exp: kv["exp"], ext: kv["ext"],
				ren: kv["ren"], hold: kv["hold"], fp: kv["fp"], out: kv["out"]}
		}
		switch e.kind {
		case "cfg":
			e.cfg = kv
		case "tick", "final":
			e.n, _ = strconv.Atoi(f[3])
		case "w":
			e.code, _ = strconv.Atoi(f[3])
			e.resend = len(f) > 4 && f[4] == "resend"
			e.fault, e.ok = kv["f"], kv["ok"]
		case "reconcile":
			e.arg = f[3]
		case "late":
			// a late write applied: its kind (L_RENEW, L_COMMIT), whose, ok
			e.code, _ = strconv.Atoi(f[3])
			e.ok, e.n = kv["ok"], kv["me"]
		case "commit":
			if len(f) > 3 && f[3] == "cancelled" {
				e.kind = "cancelled"
			}
		case "end":
			e.n, _ = strconv.Atoi(f[3])
			e.out = kv["out"]
		case "opread":
			e.n = kv["v"]
		case "run":
			e.n = kv["due"]
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// interesting reports whether a schedule has every attempt write to the
// store: random simulation often stalls an attempt until it stops.
func interesting(evs []event) bool {
	wrote := map[int]bool{}
	for _, e := range evs {
		if e.kind == "w" || e.kind == "cancelled" {
			wrote[e.actor] = true
		}
	}
	return wrote[1] && wrote[2]
}
