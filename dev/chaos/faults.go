package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Fault is a fault one operation may suffer.
type Fault int

// The faults the harness injects; see the package documentation.
const (
	NoFault Fault = iota
	CrashAfterClaim
	CrashBeforeCommit
	CrashAfterCommit
	LostCommitResponse
	LostClaimResponse
	ThrottleBurst
	ServerErrorBurst
	LeaseLapse
	HandlerError
	FailAfterExternal
	HeldCommit
	HeldClaim
	numFaults
)

// holdFor is how long a held commit or claim stays in flight.
const holdFor = 40 * time.Millisecond

var faultNames = [numFaults]string{"none", "crash-after-claim", "crash-before-commit", "crash-after-commit",
	"lost-commit-response", "lost-claim-response", "throttle-burst", "5xx-burst", "lease-lapse",
	"handler-error", "fail-after-external", "held-commit", "held-claim"}

func (f Fault) String() string {
	if f >= 0 && f < numFaults {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Faults lists every fault kind, NoFault excluded.
func Faults() []Fault {
	fs := make([]Fault, 0, numFaults-1)
	for f := NoFault + 1; f < numFaults; f++ {
		fs = append(fs, f)
	}
	return fs
}

// errCrashed is what a caller sees of an attempt whose instance died: the
// client's request timed out. It is retryable.
var errCrashed = errors.New("chaos: the instance died (the client timed out)")

// errTransient is a handler's transient failure. It is retryable.
var errTransient = errors.New("chaos: transient handler failure")

// plan is what the harness decided for one operation, carried in the
// context so that the wrapping store and the HTTP transport can act on it.
type plan struct {
	fault Fault
	// dead is set once the instance has "exited": no later store call of
	// the attempt reaches the store.
	dead atomic.Bool
	// handlerDone is set when the handler returns: the next write is the commit.
	handlerDone atomic.Bool
	// fired is set when the fault took effect.
	fired atomic.Bool
	// holding, for HeldCommit, is closed when the commit is held in flight
	// (or when the request ends without a held commit).
	holding     chan struct{}
	holdingOnce sync.Once
}

// closeHolding lets the duplicates of a held commit go.
func (p *plan) closeHolding() {
	if p != nil && p.holding != nil {
		p.holdingOnce.Do(func() { close(p.holding) })
	}
}

type planKey struct{}

func withPlan(ctx context.Context, p *plan) context.Context {
	return context.WithValue(ctx, planKey{}, p)
}

func planFrom(ctx context.Context) *plan {
	p, _ := ctx.Value(planKey{}).(*plan)
	return p
}

// fire reports whether p's fault is f and has not fired yet, and marks it fired.
func (p *plan) fire(f Fault) bool {
	return p != nil && p.fault == f && p.fired.CompareAndSwap(false, true)
}

// bursts is a shared count of store calls to refuse, whoever makes them.
type bursts struct {
	mu   sync.Mutex
	n    int
	kind Fault // ThrottleBurst or ServerErrorBurst
	// refused counts the calls refused, by kind.
	refused [numFaults]int
}

// start makes the next n calls fail with kind.
func (b *bursts) start(kind Fault, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.kind = n, kind
}

// take reports whether this call is refused, and how.
func (b *bursts) take() (Fault, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n <= 0 {
		return NoFault, false
	}
	b.n--
	b.refused[b.kind]++
	return b.kind, true
}

func (b *bursts) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n = 0
}

func (b *bursts) refusedCalls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.refused {
		n += c
	}
	return n
}

// crashStore wraps a store and plays the crash faults of the plan in each
// call's context: a dead attempt's calls never reach the inner store. When
// lose is set it also plays the lost responses, by sending a call twice
// (the second time as the client's retry after a lost answer), and the
// held claims and commits, by waiting before the call; a backend that
// loses responses and holds calls below the SDK leaves that to its
// transport.
type crashStore struct {
	inner lambdaidem.Store
	lose  bool
}

// hold plays a held call of a backend without a transport: a wait before
// the call (an in-memory store has no transaction conflicts to meet).
func (s *crashStore) hold(p *plan, f Fault) {
	if s.lose && p.fire(f) {
		p.closeHolding()
		time.Sleep(holdFor)
	}
}

func (s *crashStore) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	p := planFrom(ctx)
	if p != nil && p.dead.Load() {
		return lambdaidem.Record{}, false, errCrashed
	}
	s.hold(p, HeldClaim)
	rec, ok, err := s.inner.Claim(ctx, c)
	if s.lose && err == nil && ok && p.fire(LostClaimResponse) {
		return s.inner.Claim(ctx, c)
	}
	return rec, ok, err
}

func (s *crashStore) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	p := planFrom(ctx)
	switch {
	case p == nil:
		return s.inner.Commit(ctx, c)
	case p.dead.Load():
		return lambdaidem.Record{}, false, errCrashed
	case p.fire(CrashBeforeCommit):
		p.dead.Store(true)
		return lambdaidem.Record{}, false, errCrashed
	}
	s.hold(p, HeldCommit)
	rec, ok, err := s.inner.Commit(ctx, c)
	switch {
	case err == nil && ok && p.fire(CrashAfterCommit):
		p.dead.Store(true)
		return lambdaidem.Record{}, false, errCrashed
	case s.lose && err == nil && ok && p.fire(LostCommitResponse):
		return s.inner.Commit(ctx, c)
	}
	return rec, ok, err
}

func (s *crashStore) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if p := planFrom(ctx); p != nil && p.dead.Load() {
		return false, errCrashed
	}
	return s.inner.Release(ctx, f)
}

func (s *crashStore) MarkExternal(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if p := planFrom(ctx); p != nil && p.dead.Load() {
		return false, errCrashed
	}
	return s.inner.MarkExternal(ctx, f)
}

func (s *crashStore) Renew(ctx context.Context, r lambdaidem.Renewal) (bool, error) {
	if p := planFrom(ctx); p != nil && p.dead.Load() {
		return false, errCrashed
	}
	return s.inner.Renew(ctx, r)
}

func (s *crashStore) MarkUnknown(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	if p := planFrom(ctx); p != nil && p.dead.Load() {
		return false, errCrashed
	}
	return s.inner.MarkUnknown(ctx, f)
}

func (s *crashStore) Get(ctx context.Context, key string, now time.Time) (lambdaidem.Record, error) {
	if p := planFrom(ctx); p != nil && p.dead.Load() {
		return lambdaidem.Record{}, errCrashed
	}
	return s.inner.Get(ctx, key, now)
}
