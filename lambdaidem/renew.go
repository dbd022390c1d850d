package lambdaidem

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// RenewMode chooses whether a claim-first attempt renews its lease while
// its handler runs.
//
// A lease is the invocation's deadline plus Options.LeaseMargin: enough
// where the platform stops a handler at its deadline. Lambda Managed
// Instances do not: an invocation that times out is reported as timed out,
// but its code keeps running (Lambda developer guide, "Understanding the
// Lambda Managed Instances execution environment", Invocation timeouts);
// nor does a container or a local server, which has no Lambda deadline at
// all. Without renewal, a retry would take over the record of an attempt
// that still runs. Whether the owner renews is recorded in the record at
// claim, so that duplicates and operators judge it by the owner's setting
// (see [Judge]).
type RenewMode int

const (
	// RenewAuto (the default) renews everywhere except where the platform
	// is positively known to stop a handler at its deadline: standard
	// Lambda, identified by what AWS documents for its execution
	// environment (AWS_LAMBDA_INITIALIZATION_TYPE is "on-demand",
	// "provisioned-concurrency" or "snap-start"; Lambda Managed Instances
	// set "lambda-managed-instances"; see "Defined runtime environment
	// variables" in the Lambda developer guide) with at most one
	// invocation at a time (aws-lambda-go's lambdacontext.MaxConcurrency).
	// Lambda Managed Instances at any concurrency, containers, local
	// servers and tests renew.
	RenewAuto RenewMode = iota
	// RenewAlways renews wherever the Guard runs.
	RenewAlways
	// RenewNever never renews: the lease is the deadline plus the margin.
	// Set it only where the platform stops a handler at its deadline.
	RenewNever
)

// standardLambdaInit are the values of AWS_LAMBDA_INITIALIZATION_TYPE that
// AWS documents for standard Lambda, which stops a handler at its
// deadline; Lambda Managed Instances set "lambda-managed-instances".
var standardLambdaInit = map[string]bool{"on-demand": true, "provisioned-concurrency": true, "snap-start": true}

// initTypeEnv is the variable that names how Lambda initialized the
// execution environment.
const initTypeEnv = "AWS_LAMBDA_INITIALIZATION_TYPE"

// String names the mode: "auto", "always" or "never".
func (m RenewMode) String() string {
	switch m {
	case RenewAuto:
		return "auto"
	case RenewAlways:
		return "always"
	case RenewNever:
		return "never"
	}
	return fmt.Sprintf("RenewMode(%d)", int(m))
}

// resolve decides RenewAuto for this process, reading the environment
// with getenv.
func (m RenewMode) resolve(getenv func(string) string) RenewMode {
	if m != RenewAuto {
		return m
	}
	if standardLambdaInit[getenv(initTypeEnv)] && lambdacontext.MaxConcurrency() <= 1 {
		return RenewNever
	}
	return RenewAlways
}

// renewer keeps one attempt's lease alive while its handler runs.
//
// It waits until the handler has run Options.RenewFraction of its lease
// (a handler that ends sooner makes no store call) and then extends the
// lease by its original length with one fenced [Store.Renew], again each
// time that fraction of the renewed lease has passed, never past
// Options.MaxRunTime from the handler's start. A renewal that fails with an
// error is retried, with backoff, until the lease ends. The attempt's
// context is cancelled, with a cause matching [ErrLeaseLost], when a
// renewal is fenced out (another attempt took the record over, or a
// reconciler resolved it) or the lease ends unrenewed; the commit is fenced
// on the attempt's token, so nothing the attempt staged can then commit.
type renewer struct {
	stopOnce sync.Once
	stopped  chan struct{} // closed by stop: the handler returned or panicked
	done     chan struct{} // closed when the loop has returned
	abort    context.CancelFunc
	cancel   context.CancelCauseFunc
	until    atomic.Int64 // the lease the attempt holds, Unix nanoseconds
	lost     atomic.Bool  // the lease was given up: fenced out, lapsed or hung
	// writing is held across every store write of the renewer and the
	// attempt's external mark, so that the two never cross.
	writing  sync.Mutex
	external bool // the attempt marked an external effect; under writing
}

// lock holds off the renewer's writes until the returned function is
// called; on nil (no renewer) it does nothing.
func (r *renewer) lock() func() {
	if r == nil {
		return func() {}
	}
	r.writing.Lock()
	return r.writing.Unlock
}

// markedExternal tells the renewer, under lock, that the attempt's record
// now carries the external mark (and no expiration).
func (r *renewer) markedExternal() {
	if r != nil {
		r.external = true
	}
}

// renew starts renewing the lease of the attempt that owns rec with token,
// when the Guard renews. actx is the attempt's context (see op.invoke) and
// cancel ends it, with the cause the lease was lost for. It returns the
// renewer, nil when there is none.
func (o *op[Out]) renew(actx context.Context, cancel context.CancelCauseFunc, rec Record, token string) *renewer {
	opts := &o.g.opts
	if opts.Renew != RenewAlways {
		return nil
	}
	start := opts.Now()
	lease := rec.LeaseUntil.Sub(start)
	if lease <= 0 {
		return nil // nothing left to keep alive; the commit is fenced anyway
	}
	// Renewals outlive the invocation's deadline: that is what they are for.
	rctx, abort := context.WithCancel(context.WithoutCancel(actx))
	r := &renewer{stopped: make(chan struct{}), done: make(chan struct{}), abort: abort, cancel: cancel}
	r.until.Store(rec.LeaseUntil.UnixNano())
	go func() {
		defer close(r.done)
		o.keepAlive(rctx, r, Fence{Key: o.key, Token: token}, start, lease, rec.LeaseUntil, rec.ExpiresAt)
	}()
	return r
}

// stop ends the renewal, waits for its goroutine, and releases the
// handler's context. It may be called more than once, and on nil.
func (r *renewer) stop() {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		close(r.stopped)
		r.abort() // a renewal in flight is not waited for
		<-r.done
		r.cancel(nil)
	})
}

// keepAlive is the renewal loop.
func (o *op[Out]) keepAlive(ctx context.Context, r *renewer, f Fence, start time.Time, lease time.Duration, until, expires time.Time) {
	opts := &o.g.opts
	hung := start.Add(opts.MaxRunTime)
	every := time.Duration(float64(lease) * opts.RenewFraction)
	next := start.Add(every)
	for {
		if !o.sleep(r, next.Sub(opts.Now())) {
			return
		}
		if !hung.After(until) {
			// MaxRunTime reached: the attempt counts as hung once its last
			// lease ends.
			if o.sleep(r, until.Sub(opts.Now())) {
				o.log(ctx, slog.LevelWarn, "attempt ran past MaxRunTime; its lease ended", slog.Duration("max_run_time", opts.MaxRunTime))
				r.giveUp(fmt.Errorf("%w: the attempt ran past MaxRunTime (%v)", ErrLeaseLost, opts.MaxRunTime))
			}
			return
		}
		var ok bool
		ok, until, expires = o.renewOnce(ctx, r, f, lease, hung, until, expires)
		if !ok {
			return
		}
		r.until.Store(until.UnixNano())
		next = opts.Now().Add(every)
	}
}

// renewOnce renews the lease that ends at until, retrying errors with
// backoff until it ends. It returns the new lease and TTL, or false when
// the loop must end: stopped, or the lease lost (the attempt's context is
// then cancelled).
func (o *op[Out]) renewOnce(ctx context.Context, r *renewer, f Fence, lease time.Duration, hung, until, expires time.Time) (bool, time.Time, time.Time) {
	opts := &o.g.opts
	backoff := min(max(lease/50, 10*time.Millisecond), time.Second)
	for {
		now := opts.Now()
		left := until.Sub(now)
		if left < 0 {
			o.log(ctx, slog.LevelError, "lease ended before a renewal got through")
			r.giveUp(o.lost(Record{Status: StatusInProgress, LeaseUntil: until}))
			return false, until, expires
		}
		want := now.Add(lease)
		if want.After(hung) {
			want = hung
		}
		hold := OwnerHold(want, now, true, opts.MaxRunTime, opts.LeaseMargin)
		exp := maxTime(expires, ExpiryFor(now, hold, 0))
		cctx, cancel := context.WithTimeout(ctx, min(opts.FinishTimeout, max(left, time.Millisecond)))
		r.writing.Lock()
		ok, err := o.g.store.Renew(cctx, Renewal{Key: f.Key, Token: f.Token, Now: now, LeaseUntil: want, ExpiresAt: exp, HoldUntil: hold, External: r.external})
		r.writing.Unlock()
		cancel()
		switch {
		case err == nil && ok:
			return true, want, exp
		case err == nil:
			o.log(ctx, slog.LevelWarn, "lease renewal fenced out: another attempt owns the record, or it was resolved")
			r.giveUp(o.lost(Record{}))
			return false, until, expires
		}
		select {
		case <-r.stopped:
			return false, until, expires
		default:
		}
		o.storeError(ctx, "renew", err)
		o.log(ctx, slog.LevelWarn, "lease renewal failed; retrying while the lease lasts", slog.Any("error", err))
		if !o.sleep(r, min(backoff, until.Sub(opts.Now()))) {
			return false, until, expires
		}
		backoff = min(2*backoff, time.Second)
	}
}

// giveUp records that the attempt no longer holds its lease and cancels
// its context with cause.
func (r *renewer) giveUp(cause error) {
	r.lost.Store(true)
	r.cancel(cause)
}

// holdsLease reports whether the attempt that claimed rec still holds its
// lease: its renewer has not given it up and, by the clock, the lease it
// holds has not ended (rec's, without a renewer).
func (o *op[Out]) holdsLease(r *renewer, rec Record) bool {
	now := o.g.opts.Now()
	if r == nil {
		return !rec.LeaseUntil.Before(now)
	}
	return !r.lost.Load() && now.UnixNano() <= r.until.Load()
}

// lost is the cause the attempt's context is cancelled with when its
// lease is lost. (Hooks run on the invoking goroutine only, so none is
// called here; the attempt's own result reports the conflict.)
func (o *op[Out]) lost(rec Record) error {
	err := recordError(ErrLeaseLost, rec)
	err.Key = o.key
	return err
}

// sleep waits d on the Guard's timer; it reports false if the renewer was
// stopped first.
func (o *op[Out]) sleep(r *renewer, d time.Duration) bool {
	select {
	case <-r.stopped:
		return false
	default:
	}
	if d <= 0 {
		return true
	}
	select {
	case <-r.stopped:
		return false
	case <-o.g.opts.After(d):
		return true
	}
}
