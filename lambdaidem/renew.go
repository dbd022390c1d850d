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
// Lambda Managed Instances execution environment", Invocation timeouts).
// Without renewal, a retry would take over the record of an attempt that
// still runs.
type RenewMode int

const (
	// RenewAuto (the default) renews on Lambda Managed Instances, detected
	// through aws-lambda-go (lambdacontext.MaxConcurrency() > 1, which the
	// runtime's AWS_LAMBDA_MAX_CONCURRENCY sets), and not elsewhere. A
	// Managed Instances function configured for one invocation at a time is
	// not detected: set RenewAlways.
	RenewAuto RenewMode = iota
	// RenewAlways renews wherever the Guard runs.
	RenewAlways
	// RenewNever never renews: the lease is the deadline plus the margin.
	RenewNever
)

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

// resolve decides RenewAuto for this process.
func (m RenewMode) resolve() RenewMode {
	if m != RenewAuto {
		return m
	}
	if lambdacontext.MaxConcurrency() > 1 {
		return RenewAlways
	}
	return RenewNever
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
}

// renew starts renewing the lease of the attempt that owns rec with token,
// when the Guard renews. It returns the context the handler runs in and
// the renewer, nil when there is none.
func (o *op[Out]) renew(ctx context.Context, rec Record, token string) (context.Context, *renewer) {
	opts := &o.g.opts
	if opts.Renew != RenewAlways {
		return ctx, nil
	}
	start := opts.Now()
	lease := rec.LeaseUntil.Sub(start)
	if lease <= 0 {
		return ctx, nil // nothing left to keep alive; the commit is fenced anyway
	}
	actx, cancel := context.WithCancelCause(ctx)
	// Renewals outlive the invocation's deadline: that is what they are for.
	rctx, abort := context.WithCancel(context.WithoutCancel(ctx))
	r := &renewer{stopped: make(chan struct{}), done: make(chan struct{}), abort: abort, cancel: cancel}
	r.until.Store(rec.LeaseUntil.UnixNano())
	go func() {
		defer close(r.done)
		o.keepAlive(rctx, r, Fence{Key: o.key, Token: token}, start, lease, rec.LeaseUntil, rec.ExpiresAt)
	}()
	return actx, r
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
		exp := maxTime(expires, want.Add(time.Second))
		cctx, cancel := context.WithTimeout(ctx, min(opts.FinishTimeout, max(left, time.Millisecond)))
		ok, err := o.g.store.Renew(cctx, Renewal{Key: f.Key, Token: f.Token, Now: now, LeaseUntil: want, ExpiresAt: exp})
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

// ownerMayRun reports whether the owner of an in-progress record whose
// lease lapsed may still be running: it renewed its lease (so it runs
// where deadlines are not enforced) less than MaxRunTime ago, or, where
// this Guard renews (deadlines are not enforced here either), its lease
// ended less than MaxRunTime ago though no renewal of it got through (all
// refused: an outage, throttling). Its renewals stopped, yet it may still
// reach its external effect: such a record is neither taken over nor
// reconciled.
func (o *op[Out]) ownerMayRun(rec Record, now time.Time) bool {
	last := rec.RenewedAt
	if last.IsZero() && o.g.opts.Renew == RenewAlways {
		last = rec.LeaseUntil
	}
	return !last.IsZero() && now.Before(last.Add(o.g.opts.MaxRunTime))
}
