package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Config sets up a run. The zero value of every field means its default.
type Config struct {
	// Seed fixes the fault plan. Default 1.
	Seed uint64
	// Ops is how many operations the workers run together. Default 2000.
	Ops int
	// Workers is how many run at once, each a Lambda instance. Default 16.
	Workers int
	// Keys is how many distinct operations they contend for at a time.
	// Default 9.
	Keys int
	// Window is how many consecutive operations share one generation of
	// the keys; the next window starts fresh operations on new keys, so
	// that faults keep hitting first attempts, not only replays. Default
	// 3×Keys: each operation is requested about three times, mostly at once.
	Window int
	// FaultRate is the share of operations that draw a fault. Default 0.5.
	FaultRate float64
	// Faults lists the fault kinds to draw from. Default: all.
	Faults []Fault
	// MaxSkew bounds each instance's clock error against the shared clock,
	// either way. Default 500ms.
	MaxSkew time.Duration
	// LeaseMargin is the Guard's LeaseMargin; it must exceed twice MaxSkew.
	// Default 2s.
	LeaseMargin time.Duration
	// Timeout is each invocation's deadline on the (virtual) clock, as
	// Lambda's function timeout. Default 6s.
	Timeout time.Duration
	// Outbox, when set, has every handler run also stage an outbox message
	// naming its run, and a relay publish the committed messages while the
	// run goes on and after the drain (see outbox.go). The backend must be
	// an [Outboxer]. Default false.
	Outbox bool
}

func (c *Config) setDefaults() error {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Ops == 0 {
		c.Ops = 2000
	}
	if c.Workers == 0 {
		c.Workers = 16
	}
	if c.Keys == 0 {
		c.Keys = 9
	}
	if c.Window == 0 {
		c.Window = 3 * c.Keys
	}
	if c.FaultRate == 0 {
		c.FaultRate = 0.5
	}
	if c.Faults == nil {
		c.Faults = Faults()
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = 500 * time.Millisecond
	}
	if c.LeaseMargin == 0 {
		c.LeaseMargin = 2 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 6 * time.Second
	}
	switch {
	case c.Ops < 0 || c.Workers < 0 || c.Keys < 0 || c.Window < 0:
		return errors.New("chaos: Ops, Workers, Keys and Window must not be negative")
	case c.FaultRate < 0 || c.FaultRate > 1:
		return fmt.Errorf("chaos: FaultRate %v is not in [0, 1]", c.FaultRate)
	case c.LeaseMargin <= 2*c.MaxSkew:
		return fmt.Errorf("chaos: LeaseMargin %v must exceed twice MaxSkew %v: a lease would lapse early on a fast clock", c.LeaseMargin, c.MaxSkew)
	}
	return nil
}

// horizon is the retry horizon of the run: far longer than the virtual
// time a run spans, so that no record expires inside it.
const horizon = 30 * 24 * time.Hour

// keyKind says how an operation on a key behaves; see the package doc.
type keyKind int

const (
	claimFirst keyKind = iota
	optimistic
	external
)

func kindOf(k int) keyKind { return keyKind(k % 3) }

func (k keyKind) String() string {
	return [...]string{"claim-first", "optimistic", "external"}[k]
}

// applicable reports whether fault f means anything for a key of kind k.
func (k keyKind) applicable(f Fault) bool {
	switch f {
	case LostClaimResponse:
		return k != optimistic
	case FailAfterExternal:
		return k == external
	case HeldClaim:
		return k != optimistic // an optimistic request makes no claim
	}
	return true
}

// Receipt is an operation's result: the run whose effect it reports.
type Receipt struct {
	Key string `json:"key"`
	Run string `json:"run"`
}

// vclock is the shared virtual clock: real time plus an offset that lease
// lapses move forward.
type vclock struct{ offset atomic.Int64 }

func (c *vclock) now(skew time.Duration) time.Time {
	return time.Now().Add(time.Duration(c.offset.Load()) + skew)
}

func (c *vclock) jump(d time.Duration) { c.offset.Add(int64(d)) }

// deadlineCtx carries an invocation's deadline on the virtual clock, as a
// Lambda context carries the function's deadline; cancellation comes from
// the parent.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// downstream is an external API with its own idempotency key, like a
// payment provider: the first call with an operation key decides the
// result, later calls with that key get it back.
type downstream struct {
	mu      sync.Mutex
	first   map[string]string          // operation key → run
	opKeys  map[string]map[string]bool // key → operation keys used
	calls   int
	deduped int
}

func (d *downstream) call(key, opKey, run string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.opKeys[key] == nil {
		d.opKeys[key] = map[string]bool{}
	}
	d.opKeys[key][opKey] = true
	if r, ok := d.first[opKey]; ok {
		d.deduped++
		return r
	}
	d.first[opKey] = run
	return run
}

func (d *downstream) lookup(opKey string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.first[opKey]
	return r, ok
}

// run is the state of one run.
type run struct {
	cfg     Config
	backend Backend
	store   lambdaidem.Store
	clock   vclock
	bursts  bursts
	down    downstream
	runs    atomic.Int64

	hist      *history
	instances []*instance

	mu        sync.Mutex
	planned   [numFaults]int
	fired     [numFaults]int
	outcomes  map[string]int // outcome class → count
	responses map[string][]Receipt
	requested map[string]int // key → its index, for its kind
	problems  []string
	jumps     int

	deliveries map[string][]delivery // key → what the relay published for it
	publishes  atomic.Int64
	relayCalm  atomic.Bool // the faults are over: the relay no longer crashes
}

// instance is one worker: a Lambda instance with its own skewed clock and
// its own Guards.
type instance struct {
	skew   time.Duration
	guards [3]*lambdaidem.Guard // by keyKind
}

// Run runs the harness against backend and reports what it saw. It returns
// an error only when the run could not be set up or read back; the
// violations are in the report.
func Run(ctx context.Context, backend Backend, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	r := &run{
		cfg: cfg, backend: backend,
		down:      downstream{first: map[string]string{}, opKeys: map[string]map[string]bool{}},
		outcomes:  map[string]int{},
		responses: map[string][]Receipt{},
		requested: map[string]int{},
		hist:      newHistory(),
	}
	if b, ok := backend.(backendInit); ok {
		b.init(&r.bursts)
	}
	r.store = &crashStore{inner: backend.Store(), lose: !backend.LosesResponses()}

	plan := rand.New(rand.NewPCG(cfg.Seed, 0xc4a05))
	instances := make([]*instance, cfg.Workers)
	for w := range instances {
		skew := time.Duration(plan.Int64N(int64(2*cfg.MaxSkew)+1)) - cfg.MaxSkew
		in, err := r.newInstance(skew, w%2 == 1)
		if err != nil {
			return nil, err
		}
		instances[w] = in
	}
	r.instances = instances

	start := time.Now()
	stopRelay := r.startRelay(ctx)
	ops := make(chan int)
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Go(func() {
			for i := range ops {
				r.operation(ctx, in, i)
			}
		})
	}
	for i := 0; i < cfg.Ops && ctx.Err() == nil; i++ {
		ops <- i
	}
	close(ops)
	wg.Wait()
	r.bursts.stop()

	quiet, err := backend.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	drainRetries := r.drain(ctx, instances[0])
	stopRelay()
	r.finishRelay(ctx)
	final, err := backend.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	rep := r.report(quiet, final)
	rep.DrainRetries = drainRetries
	rep.Duration = time.Since(start)
	return rep, nil
}

func (r *run) newInstance(skew time.Duration, cache bool) (*instance, error) {
	in := &instance{skew: skew}
	for k := range in.guards {
		g, err := lambdaidem.New(r.store, func(o *lambdaidem.Options) {
			o.Namespace = "chaos"
			o.Logger = slog.New(slog.DiscardHandler) // thousands of injected failures; the report counts them
			o.RetryHorizon = horizon
			o.LeaseMargin = r.cfg.LeaseMargin
			o.Now = func() time.Time { return r.clock.now(skew) }
			// The instances are standard Lambda's: stopped at their
			// deadline (a crash or a lapse ends an attempt), so they do not
			// renew, as RenewAuto decides in a standard Lambda environment.
			o.Renew = lambdaidem.RenewNever
			if keyKind(k) == optimistic {
				o.Mode = lambdaidem.Optimistic
			}
			if cache {
				o.CacheSize = 4
			}
		})
		if err != nil {
			return nil, err
		}
		in.guards[k] = g
	}
	return in, nil
}

// lapse moves the shared clock past every lease issued so far, for every
// instance's clock.
func (r *run) lapse() {
	r.clock.jump(r.cfg.Timeout + r.cfg.LeaseMargin + 2*r.cfg.MaxSkew + time.Millisecond)
	r.mu.Lock()
	r.jumps++
	r.mu.Unlock()
}

// operation runs operation i on instance in, with the fault its seed draws.
func (r *run) operation(ctx context.Context, in *instance, i int) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))
	k := rng.IntN(r.cfg.Keys)
	key := fmt.Sprintf("k%d-w%d", k, i/r.cfg.Window)
	p := &plan{}
	if rng.Float64() < r.cfg.FaultRate {
		var choices []Fault
		for _, f := range r.cfg.Faults {
			if kindOf(k).applicable(f) {
				choices = append(choices, f)
			}
		}
		if len(choices) > 0 {
			p.fault = choices[rng.IntN(len(choices))]
		}
	}
	burst := 1 + rng.IntN(6)
	r.mu.Lock()
	r.planned[p.fault]++
	r.requested[key] = k
	r.mu.Unlock()

	switch p.fault {
	case ThrottleBurst, ServerErrorBurst:
		r.bursts.start(p.fault, burst)
		p.fired.Store(true)
	}
	var dups sync.WaitGroup
	if p.fault == HeldCommit {
		// Duplicates arrive while the commit is held in flight: on DynamoDB
		// their claims meet TransactionConflictException.
		p.holding = make(chan struct{})
		for d := range heldCommitDuplicates {
			other := r.instances[(i+1+d)%len(r.instances)]
			dups.Go(func() {
				select {
				case <-p.holding:
				case <-ctx.Done():
					return
				}
				out, err := r.invoke(ctx, other, k, key, fmt.Sprintf("o%d.dup%d", i, d), nil)
				r.record(key, nil, out, err)
			})
		}
	}
	out, err := r.invoke(ctx, in, k, key, fmt.Sprintf("o%d", i), p)
	if p.holding != nil {
		p.closeHolding() // the commit was never held: release the duplicates
	}
	r.record(key, p, out, err)
	dups.Wait()
}

// heldCommitDuplicates is how many duplicates arrive during a held commit.
const heldCommitDuplicates = 2

// invoke runs one request for key on instance in under plan p (nil: no
// fault), as a Lambda invocation with a deadline on the virtual clock.
func (r *run) invoke(ctx context.Context, in *instance, k int, key, runPrefix string, p *plan) (Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a real bound on a stuck call
	defer cancel()
	ctx = deadlineCtx{ctx, r.clock.now(in.skew).Add(r.cfg.Timeout)}
	if p != nil {
		ctx = withPlan(ctx, p)
	}
	kind := kindOf(k)
	call := lambdaidem.Call[Receipt]{Operation: "Chaos", Scope: "tenant", Key: key, Fingerprint: "fp-" + key}
	if kind == external {
		call.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (Receipt, bool, error) {
			run, ok := r.down.lookup(u.OperationKey)
			return Receipt{Key: key, Run: run}, ok, nil
		}
	}
	var runs []string // what this request's handler could commit
	begun := r.hist.now()
	out, err := lambdaidem.Do(ctx, in.guards[kind], call, func(ctx context.Context) (Receipt, error) {
		if p != nil {
			defer p.handlerDone.Store(true)
		}
		run := fmt.Sprintf("%s.%d", runPrefix, r.runs.Add(1))
		if p.fire(CrashAfterClaim) {
			p.dead.Store(true)
			return Receipt{}, errCrashed
		}
		if kind == external {
			a, ok := lambdaidem.AttemptFrom(ctx)
			if !ok {
				return Receipt{}, errors.New("chaos: no attempt in the handler's context")
			}
			if err := a.BeginExternal(ctx); err != nil {
				return Receipt{}, err
			}
			run = r.down.call(key, a.OperationKey(), run)
			runs = append(runs, run)
			if p.fire(FailAfterExternal) {
				return Receipt{}, errTransient
			}
		} else if err := r.backend.Stage(ctx, key, run); err != nil {
			return Receipt{}, err
		} else if err := r.stageMessage(ctx, key, run); err != nil {
			return Receipt{}, err
		} else {
			runs = append(runs, run)
		}
		if p.fire(LeaseLapse) {
			r.lapse()
			time.Sleep(2 * time.Millisecond) // let other instances take over
		}
		if p.fire(HandlerError) {
			return Receipt{}, errTransient
		}
		return Receipt{Key: key, Run: run}, nil
	})
	r.hist.add(begun, histInput{key: key, runs: runs}, answerOf(kind, out, err))
	return out, err
}

// classify names the outcome of a request; retryable is false for an
// error no caller could act on by retrying (a lost operation).
func classify(err error) (class string, retryable bool) {
	switch {
	case err == nil:
		return "success", true
	case errors.Is(err, errCrashed):
		return "crashed (client timeout)", true
	case errors.Is(err, errTransient):
		return "handler error", true
	case errors.Is(err, lambdaidem.ErrInProgress):
		return "in progress", true
	case errors.Is(err, lambdaidem.ErrLeaseLost):
		return "lease lost", true
	case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
		return "outcome unknown", true
	case errors.Is(err, lambdaidem.ErrStoreUnavailable):
		return "store unavailable", true
	}
	return unclassified, false
}

// unclassified is the outcome class of an error that matches none of the
// conditions a caller can act on: an adapter answers it with HTTP 500.
const unclassified = "unclassified error (HTTP 500)"

func (r *run) record(key string, p *plan, out Receipt, err error) {
	class, retryable := classify(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if p != nil && p.fired.Load() {
		r.fired[p.fault]++
	}
	r.outcomes[class]++
	if err == nil {
		r.responses[key] = append(r.responses[key], out)
	}
	if !retryable {
		fault := NoFault
		if p != nil {
			fault = p.fault
		}
		r.problems = append(r.problems, fmt.Sprintf("%s on %s (fault %v): %v", unclassified, key, fault, err))
	}
}

// drain retries every requested key with no faults until it succeeds, the
// way callers retry after errors, moving the clock past leases when a
// crashed attempt still holds one. It returns how many retries it took.
func (r *run) drain(ctx context.Context, in *instance) int {
	r.lapse()
	retries := 0
	for _, key := range r.keys() {
		k := r.requested[key]
		var err error
		for try := 0; try < 8; try++ {
			retries++
			var out Receipt
			out, err = r.invoke(ctx, in, k, key, fmt.Sprintf("d%d", try), nil)
			if err == nil {
				r.mu.Lock()
				r.responses[key] = append(r.responses[key], out)
				r.mu.Unlock()
				break
			}
			if errors.Is(err, lambdaidem.ErrInProgress) {
				r.lapse()
			}
		}
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("%s: still failing after the drain: %v", key, err))
		}
	}
	return retries
}

// keys lists the requested keys in order.
func (r *run) keys() []string {
	keys := make([]string, 0, len(r.requested))
	for key := range r.requested {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// report checks the final tables and tallies the run.
func (r *run) report(quiet, final Snapshot) *Report {
	rep := &Report{
		Backend: r.backend.Name(), Seed: r.cfg.Seed, Ops: r.cfg.Ops, Workers: r.cfg.Workers, Keys: r.cfg.Keys,
		Planned: map[string]int{}, Fired: map[string]int{}, Outcomes: r.outcomes,
		RefusedCalls: r.bursts.refusedCalls(), ClockJumps: r.jumps, StoreCalls: r.backend.Calls(),
		Violations: slices.Clone(r.problems),
	}
	for f := NoFault + 1; f < numFaults; f++ {
		if r.planned[f] > 0 {
			rep.Planned[f.String()] = r.planned[f]
			rep.Fired[f.String()] = r.fired[f]
		}
	}
	for _, rec := range quiet.Records {
		switch rec.Status {
		case lambdaidem.StatusInProgress:
			rep.AbandonedClaims++
		case lambdaidem.StatusUnknown:
			rep.UnknownAtQuiescence++
		}
	}
	r.down.mu.Lock()
	rep.DownstreamCalls, rep.DownstreamDeduped = r.down.calls, r.down.deduped
	r.down.mu.Unlock()

	violate := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}
	keys := r.keys()
	for _, key := range keys {
		k := r.requested[key]
		var committed []string
		if kindOf(k) == external {
			for opKey := range r.down.opKeys[key] {
				if run, ok := r.down.first[opKey]; ok {
					committed = append(committed, run)
				}
			}
			if n := len(final.Effects[key]); n > 0 {
				violate("%s: %d business items for an external key", key, n)
			}
		} else {
			committed = final.Effects[key]
		}
		switch n := len(committed); {
		case n == 0:
			rep.Lost++
			violate("%s: no effect after the drain (lost)", key)
		case n > 1:
			rep.Duplicates += n - 1
			sort.Strings(committed)
			violate("%s: %d effects: %s", key, n, strings.Join(committed, ", "))
		}
		observed := strings.Join(committed, "+") // two committed runs observe as neither
		r.hist.observe(key, observed)
		for _, resp := range r.responses[key] {
			if resp.Key != key || len(committed) != 1 || resp.Run != committed[0] {
				rep.Mismatched++
				violate("%s: response %+v differs from the committed effect %v", key, resp, committed)
				break
			}
		}
	}
	now := r.clock.now(0)
	seen := map[string]bool{}
	for _, rec := range final.Records {
		seen[rec.Key] = true
		if rec.Status != lambdaidem.StatusCompleted {
			rep.Stuck++
			violate("record %s left %s (lease until %v, now %v)", rec.Key, rec.Status, rec.LeaseUntil, now)
		}
	}
	for _, key := range keys {
		if rk := lambdaidem.RecordKey("chaos", "tenant", "Chaos", key); !seen[rk] {
			violate("%s: no record after the drain", key)
		}
	}
	rep.Unclassified = r.outcomes[unclassified]
	if c, ok := r.backend.(interface{ Conflicts() int }); ok {
		rep.Conflicts = c.Conflicts()
	}
	r.reportOutbox(rep, keys, final, violate)
	var problem string
	rep.Checked, problem = r.hist.checkLinearizable(time.Minute)
	rep.Linearizable = problem == ""
	if problem != "" {
		violate("%s", problem)
	}
	rep.Requests = r.cfg.Ops
	return rep
}
