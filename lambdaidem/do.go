package lambdaidem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Call names one operation for [Do].
type Call[Out any] struct {
	// Operation names what the handler does ("CreatePayment"). Required.
	Operation string
	// Scope keeps callers apart: the tenant or principal. Two scopes using
	// the same key never meet.
	Scope string
	// Key is the caller's idempotency key. Required; at most
	// Options.MaxKeySize bytes.
	Key string
	// Fingerprint identifies the request parameters that define the intent;
	// see [Fingerprint]. A duplicate whose fingerprint differs from the
	// stored one is refused with [ErrKeyReused].
	Fingerprint string
	// Reconcile, if set, resolves a record left UNKNOWN by an earlier
	// attempt (or in progress with an external effect and a lapsed lease):
	// it returns the outcome and true if the external effect happened,
	// false if it did not (the record is released and the operation runs
	// again), or an error if it cannot tell yet (the caller gets
	// [ErrOutcomeUnknown]).
	//
	// Answer false only when the downstream system has no record of
	// Unknown.OperationKey AND guarantees that no earlier attempt's call
	// can still apply: a request already sent may land late (a lease can
	// stop a new attempt, not one already in flight). A provider that keeps
	// idempotency keys and refuses a late request under a key it answered
	// "unknown" for gives that guarantee; otherwise return an error (cannot
	// tell yet) until the longest such call would have ended. The core never
	// calls Reconcile while the owner of the record may still be running
	// ([OwnerMayRun], [Judge]): for an owner that renews its lease, until
	// its MaxRunTime (plus its LeaseMargin) after its last renewal (before
	// any, after its lease end), as the record says whatever this Guard's
	// options are. A record left UNKNOWN by an owner that never renewed is
	// reconciled at once: its handler returned, and a handler that has
	// returned is assumed to have no call of its own still in flight (its
	// context ends when it returns, cancelling a call made under it; a call
	// that ignores its context, or runs under another, must be awaited
	// before the handler returns; see docs/guarantees.md).
	//
	// "Done" keeps the atomic boundary: the UNKNOWN attempt's staged
	// business writes and outbox messages died with it, so Reconcile may
	// stage, through its context (dynamostore.Stage, outbox.Stage, as a
	// handler does), the writes and messages the effect implies; they
	// commit with the outcome in one transaction, or not at all (a failed
	// business condition is then the caller's error, and the record stays
	// UNKNOWN). Messages get the operation's ids, the ones the UNKNOWN
	// attempt would have used. With "not done" or an error, whatever it
	// staged is dropped. It cannot begin an external effect.
	Reconcile func(context.Context, Unknown) (Out, bool, error)
}

// Unknown describes a record left UNKNOWN, for a reconcile function.
type Unknown struct {
	// Key is the record key.
	Key string
	// OperationKey is the downstream key the failed attempt used; see
	// [Attempt.OperationKey]. Ask the downstream API about it.
	OperationKey string
	// Attempts is the record's claim count.
	Attempts int
	// Since is when the operation was first claimed.
	Since time.Time
	// RenewedAt is when the last owner last renewed its lease (see
	// Options.Renew); zero if it never did. An owner that renewed ran where
	// deadlines are not enforced: a call it made may still be in flight.
	RenewedAt time.Time
	// Renews says whether the last owner renewed its lease (it ran where
	// deadlines are not enforced), as recorded at its claim.
	Renews bool
	// DispatchedAt is when the external effect was first begun, and
	// DispatchWindow how long the downstream deduplicates the operation key
	// (zero: no bound given). Past it, "not done" is refused.
	DispatchedAt   time.Time
	DispatchWindow time.Duration
}

// maxRounds bounds how often one call goes back to claim after finding the
// record released, expired or taken over while it looked.
const maxRounds = 4

// Do runs fn at most once for the operation c names, and answers every
// duplicate with the outcome of the run that committed.
//
// fn's error passes through unchanged. A nil error, or one that is terminal
// (see [Terminal]), is the outcome: it is committed with the effects fn
// staged and replayed to duplicates; a replayed error is a [*ReplayedError].
// Any other error, a panic, or a cancelled context releases the claim so
// that a retry runs fn again, unless fn had begun an external effect: then
// the record becomes UNKNOWN.
//
// The conditions a caller may meet are reported as errors matching
// [ErrInProgress], [ErrKeyReused], [ErrOutcomeUnknown], [ErrLeaseLost],
// [ErrMissingKey], [ErrInvalidKey], [ErrNoTenant], [ErrOutcomeTooLarge],
// [ErrEffectRejected] (and [ErrConditionFailed]) and [ErrStoreUnavailable];
// record conditions are a [*RecordError], staged writes the store refused a
// [*RejectedError], store failures a [*StoreError].
func Do[Out any](ctx context.Context, g *Guard, c Call[Out], fn func(context.Context) (Out, error)) (Out, error) {
	var zero Out
	switch {
	case g == nil:
		return zero, errors.New("lambdaidem: nil Guard")
	case fn == nil:
		return zero, errors.New("lambdaidem: nil function")
	case c.Operation == "":
		return zero, errors.New("lambdaidem: Call.Operation is empty")
	}
	if err := checkKey(c.Key, g.opts.MaxKeySize); err != nil {
		return zero, err
	}
	tenant, err := g.tenantOf(ctx, c.Operation)
	if err != nil {
		return zero, err
	}
	o := &op[Out]{g: g, c: c, fn: fn, key: TenantRecordKey(g.opts.Namespace, tenant, c.Scope, c.Operation, c.Key)}
	if g.opts.Disabled {
		return o.disabled(ctx)
	}
	if err := o.keyFingerprint(ctx); err != nil {
		return zero, err
	}
	if e, ok := g.cache.get(o.key, g.opts.Now()); ok {
		rec := Record{Key: o.key, Status: StatusCompleted, Fingerprint: e.fingerprint, Outcome: e.outcome, ExpiresAt: e.expiresAt}
		if err := o.sameIntent(ctx, rec); err != nil {
			return zero, err
		}
		return o.replay(ctx, rec, "cache")
	}
	if g.opts.Mode == Optimistic {
		return o.optimistic(ctx)
	}
	return o.claimFirst(ctx)
}

// op is one call of Do.
type op[Out any] struct {
	g   *Guard
	c   Call[Out]
	fn  func(context.Context) (Out, error)
	key string
	// fp is the fingerprint as stored: the Call's, keyed where the Sealer
	// keys fingerprints ([FingerprintKeyer]).
	fp string
}

// keyFingerprint sets o.fp, on the finish context: keying may ask the key
// service once per process, which must not fail for an invocation whose
// deadline is near.
func (o *op[Out]) keyFingerprint(ctx context.Context) error {
	o.fp = o.c.Fingerprint
	k, ok := o.g.opts.Sealer.(FingerprintKeyer)
	if !ok || o.fp == "" {
		return nil
	}
	fctx, cancel := o.finishContext(ctx)
	defer cancel()
	fp, err := k.KeyFingerprint(fctx, o.key, o.c.Fingerprint)
	if err != nil {
		o.log(ctx, slog.LevelError, "fingerprint could not be keyed; nothing claimed", slog.Any("error", err))
		return fmt.Errorf("lambdaidem: key the fingerprint: %w", err)
	}
	o.fp = fp
	return nil
}

// sameIntent returns nil if rec's stored fingerprint is the call's, a
// [*RecordError] matching [ErrKeyReused] if not, and an error matching
// [ErrKeyUnavailable] or [ErrKeyRefused] if the key service needed to
// tell failed. A fingerprint keyed under another secret (another process,
// a rotation) or stored unkeyed by an earlier version is asked of the
// Sealer.
func (o *op[Out]) sameIntent(ctx context.Context, rec Record) error {
	if rec.Fingerprint == o.fp {
		return nil
	}
	if o.g.opts.Sealer == nil && sealedRecord(rec) {
		return o.sealerMissing(ctx, rec)
	}
	if k, ok := o.g.opts.Sealer.(FingerprintKeyer); ok && rec.Fingerprint != "" && o.c.Fingerprint != "" {
		fctx, cancel := o.finishContext(ctx)
		same, err := k.SameFingerprint(fctx, o.key, rec.Fingerprint, o.c.Fingerprint)
		cancel()
		if err != nil {
			return o.unreadable(ctx, "stored fingerprint", OpenFailure("compare the stored fingerprint", err))
		}
		if same {
			return nil
		}
	}
	return o.conflict(ctx, ErrKeyReused, rec)
}

// errReclaim is what looking at a record in the way answers when the call
// should claim again: the record is gone, expired, released, or its lease
// lapsed. It never leaves Do.
var errReclaim = errors.New("lambdaidem: claim again")

// errReconcileExternal refuses BeginExternal inside a reconcile function:
// it settles an effect that may have happened; it does not begin one.
var errReconcileExternal = errors.New("lambdaidem: a reconcile function cannot begin an external effect; answer not done to dispatch it again")

func (o *op[Out]) claimFirst(ctx context.Context) (Out, error) {
	var zero Out
	opts := &o.g.opts
	for round := 0; round < maxRounds; round++ {
		now := opts.Now()
		token := opts.NewToken()
		lease := o.leaseUntil(ctx, now)
		renews := opts.Renew == RenewAlways
		// The hold is what duplicates and operators judge the record by (see
		// Judge); an expired record is absent, so it must not expire while
		// its owner may run, however short the retry horizon.
		hold := OwnerHold(lease, lease, renews, opts.MaxRunTime, opts.LeaseMargin)
		rec, claimed, err := o.g.store.Claim(ctx, Claim{
			Key:         o.key,
			Token:       token,
			Fingerprint: o.fp,
			Now:         now,
			LeaseUntil:  lease,
			ExpiresAt:   ExpiryFor(now, hold, opts.RetryHorizon),
			Renews:      renews,
			HoldUntil:   hold,
			Window:      opts.MaxRunTime,
		})
		if err != nil {
			// The claim may have been applied with its answer lost: give it
			// back before anything else, so that a retry does not wait out
			// a lease nobody holds.
			o.releaseErrored(ctx, token)
			if errors.Is(err, ErrInProgress) {
				// The store met another attempt's write on the record
				// (a transaction conflict) until it gave up: in progress.
				return zero, o.conflict(ctx, ErrInProgress, Record{Key: o.key, Status: StatusInProgress})
			}
			serr := o.storeError(ctx, "claim", err)
			// Fail open only for the store's sake: an invocation whose own
			// context ended during the claim has no time left to run in.
			if opts.FailOpen && errors.Is(err, ErrStoreUnavailable) && ctx.Err() == nil {
				return o.failOpen(ctx, err)
			}
			o.log(ctx, slog.LevelError, "claim failed", slog.Any("error", err))
			return zero, serr
		}
		if claimed || ownLostClaim(rec, token) {
			return o.run(ctx, rec, token)
		}
		if out, err := o.existing(ctx, rec); !errors.Is(err, errReclaim) {
			return out, err
		}
	}
	return zero, o.conflict(ctx, ErrInProgress, Record{Key: o.key, Status: StatusInProgress})
}

// run executes the handler under the claim rec, then commits or abandons.
func (o *op[Out]) run(ctx context.Context, rec Record, token string) (out Out, err error) {
	var zero Out
	opts := &o.g.opts
	fence := Fence{Key: o.key, Token: token}
	since := rec.CreatedAt
	if since.IsZero() {
		since = opts.Now()
	}
	a := &Attempt{operationKey: operationKey(o.key), since: since, number: rec.Attempts, mode: ClaimFirst}
	var rn *renewer
	a.markExternal = func(ctx context.Context, window time.Duration) error {
		// The renewer writes nothing while the mark is sent: a renewal sent
		// alongside could put back the expiration the mark removes.
		unlock := rn.lock()
		defer unlock()
		if !o.holdsLease(rn, rec) {
			// The lease lapsed (a handler running past its deadline where
			// timeouts are not enforced, its renewals refused): another
			// attempt may own the record at any moment, and an external mark
			// now would hand it to Reconcile while this call is dispatched.
			return o.conflict(ctx, ErrLeaseLost, Record{Key: o.key})
		}
		mark := fence
		mark.Now, mark.Window = opts.Now(), window
		ok, err := o.g.store.MarkExternal(ctx, mark)
		if err == nil && ok {
			rn.markedExternal()
		}
		switch {
		case err != nil:
			return o.storeError(ctx, "mark external", err)
		case !ok:
			return o.conflict(ctx, ErrLeaseLost, Record{Key: o.key})
		}
		return nil
	}
	o.hook(ctx, opts.Hooks.OnClaim, rec)
	returned := false
	defer func() {
		if returned {
			return
		}
		// The handler panicked or called runtime.Goexit (t.Fatal in a
		// handler under test): stop and await the renewer, and give the
		// claim back, before the goroutine unwinds further.
		p := recover()
		rn.stop()
		_, external := a.close()
		o.abandon(ctx, fence, external)
		if p != nil {
			panic(p)
		}
	}()
	out, err = o.invoke(ctx, a, func(hctx context.Context, end context.CancelCauseFunc) {
		rn = o.renew(hctx, end, rec, token)
	})
	returned = true
	rn.stop()
	effects, external := a.close()
	if err != nil && !isTerminal(err) {
		o.abandon(ctx, fence, external)
		return out, err
	}
	data, encErr := o.encode(ctx, out, err)
	if encErr != nil {
		o.abandon(ctx, fence, external)
		return zero, encErr
	}
	cur, stored, cerr := o.commit(ctx, token, rec, data, effects, false)
	switch {
	case cerr != nil:
		o.abandon(ctx, fence, external)
		return zero, o.commitFailed(ctx, cerr)
	case stored:
		return out, unmark(err)
	case cur.Status == StatusCompleted && cur.Live(opts.Now()):
		// Fenced out by a reconciler that resolved this attempt's record
		// (under its token) while it was stalled: what is stored is the
		// outcome, if it is this call's.
		if err := o.sameIntent(ctx, cur); err != nil {
			return zero, err
		}
		return o.replay(ctx, cur, "store")
	}
	// Fenced out: the lease lapsed and another attempt took over.
	return zero, o.conflict(ctx, ErrLeaseLost, cur)
}

// invoke runs the handler as attempt a in the attempt's context: a context
// of its own, derived from ctx, which ends when the handler returns
// (normally, by a panic or by runtime.Goexit), as net/http cancels a
// request's context when ServeHTTP returns, so a call the handler left
// running under it is cancelled. Every path that runs the handler runs it
// here. It is what the assumption "a handler that has returned has no call
// of its own still in flight" (docs/guarantees.md) asks of the library:
// the record a returned handler leaves UNKNOWN may be reconciled at once.
// The caller's ctx does not end. start, if set, is called with the
// attempt's context and the function that ends it (with a cause) before
// the handler runs: the renewer ends it early when the lease is lost.
func (o *op[Out]) invoke(ctx context.Context, a *Attempt, start func(context.Context, context.CancelCauseFunc)) (Out, error) {
	hctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	if start != nil {
		start(hctx, end)
	}
	return o.fn(withAttempt(hctx, a))
}

func (o *op[Out]) optimistic(ctx context.Context) (Out, error) {
	var zero Out
	opts := &o.g.opts
	a := &Attempt{operationKey: operationKey(o.key), since: opts.Now(), number: 1, mode: Optimistic}
	defer a.close() // on a panic: later stages fail loudly; there is no claim to release
	out, err := o.invoke(ctx, a, nil)
	effects, _ := a.close()
	if err != nil && !isTerminal(err) {
		return out, err
	}
	data, encErr := o.encode(ctx, out, err)
	if encErr != nil {
		return zero, encErr
	}
	token := opts.NewToken()
	for round := 0; round < maxRounds; round++ {
		cur, stored, cerr := o.commit(ctx, token, Record{Attempts: 1}, data, effects, true)
		if cerr != nil {
			if opts.FailOpen && len(effects) == 0 && errors.Is(cerr, ErrStoreUnavailable) {
				// The commit is the claim in this mode: fail open as a claim would.
				o.storeError(ctx, "commit", cerr)
				o.log(ctx, slog.LevelWarn, "store unavailable; answering without idempotency (FailOpen)", slog.Any("error", cerr))
				o.failedOpen(ctx, cerr)
				return out, unmark(err)
			}
			return zero, o.commitFailed(ctx, cerr)
		}
		if stored {
			return out, unmark(err)
		}
		if rout, rerr := o.existing(ctx, cur); !errors.Is(rerr, errReclaim) {
			return rout, rerr
		}
	}
	return zero, o.conflict(ctx, ErrInProgress, Record{Key: o.key, Status: StatusInProgress})
}

// commitFailed logs a commit's error and returns what the caller gets: a
// [*RejectedError] when the store refused the staged writes, a
// [*StoreError] otherwise.
func (o *op[Out]) commitFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrConditionFailed):
		o.log(ctx, slog.LevelWarn, "a business condition of a staged write failed; nothing committed, claim released", slog.Any("error", err))
		return &RejectedError{Key: o.key, Err: err}
	case errors.Is(err, ErrEffectRejected):
		o.log(ctx, slog.LevelError, "staged writes rejected; nothing committed, claim released", slog.Any("error", err))
		return &RejectedError{Key: o.key, Err: err}
	}
	o.log(ctx, slog.LevelError, "commit failed", slog.Any("error", err))
	return o.storeError(ctx, "commit", err)
}

// commit stores data, the encoded outcome, as the outcome of attempt token,
// with the staged effects, in one Store.Commit on the finish context. rec is
// the claim it commits (its attempt count and creation time); claim makes
// the commit the claim as well (optimistic mode: a first attempt, created
// now). stored reports whether the outcome is in the store: committed now,
// or by an earlier try whose response was lost ([ownLostCommit]); then the
// commit is reported to Hooks.OnCommit and the outcome cached. Otherwise
// cur is the record in the way.
func (o *op[Out]) commit(ctx context.Context, token string, rec Record, data []byte, effects []any, claim bool) (cur Record, stored bool, err error) {
	opts := &o.g.opts
	now := opts.Now()
	created := rec.CreatedAt
	if claim {
		created = now
	}
	fctx, cancel := o.finishContext(ctx)
	defer cancel()
	cur, committed, err := o.g.store.Commit(fctx, Commit{
		Key:         o.key,
		Token:       token,
		Fingerprint: o.fp,
		Outcome:     data,
		Now:         now,
		ExpiresAt:   now.Add(opts.RetryHorizon),
		Attempts:    rec.Attempts,
		CreatedAt:   created,
		Claim:       claim,
		Window:      opts.MaxRunTime,
		Effects:     effects,
	})
	if err != nil || (!committed && !ownLostCommit(cur, token, data)) {
		return cur, false, err
	}
	o.committed(ctx, rec, now)
	o.g.cache.put(Record{Key: o.key, Status: StatusCompleted, Fingerprint: o.fp, Outcome: data, ExpiresAt: storedUntil(cur, now.Add(opts.RetryHorizon))})
	return cur, true, nil
}

// ownLostCommit reports whether cur, the record a refused commit of data
// under token found in its way, is that very commit, applied by an earlier
// try whose response was lost (the store's retry then fails its
// condition). The token alone does not tell: a reconciler commits an
// UNKNOWN record under its owner's token, so the stored outcome must also
// be these bytes.
func ownLostCommit(cur Record, token string, data []byte) bool {
	return cur.Status == StatusCompleted && cur.Token == token && bytes.Equal(cur.Outcome, data)
}

// ownLostClaim reports whether rec, the record a refused claim with token
// found, is that claim, applied by an earlier try whose response was lost.
func ownLostClaim(rec Record, token string) bool {
	return rec.Status == StatusInProgress && rec.Token == token
}

// existing decides what a duplicate gets from the record in its way, or
// [errReclaim], as [Judge] says.
func (o *op[Out]) existing(ctx context.Context, rec Record) (Out, error) {
	var zero Out
	opts := &o.g.opts
	switch rec.Status {
	case "", StatusInProgress, StatusCompleted, StatusUnknown:
	default:
		return zero, fmt.Errorf("lambdaidem: record %s has unknown status %q", rec.Key, rec.Status)
	}
	v := Judge(rec, opts.Now(), opts.MaxRunTime)
	if v == VerdictAbsent || v == VerdictExpired {
		return zero, errReclaim
	}
	if err := o.sameIntent(ctx, rec); err != nil {
		return zero, err
	}
	switch v {
	case VerdictReplay:
		return o.replay(ctx, rec, "store")
	case VerdictReconcile, VerdictWindowPassed:
		// UNKNOWN, or its owner began an external effect and lapsed: as
		// good as UNKNOWN. Stores refuse to let a claim take it over.
		return o.reconcile(ctx, rec, v)
	case VerdictHeld:
		// Its owner may still be running, or its effect still land:
		// asking the downstream API now could race its call.
		if rec.Status == StatusUnknown {
			return zero, o.conflict(ctx, ErrOutcomeUnknown, rec)
		}
		if opts.InFlight == Wait {
			return o.wait(ctx, rec)
		}
		return zero, o.conflict(ctx, ErrInProgress, rec)
	}
	return zero, errReclaim // VerdictTakeOver
}

// wait polls an in-progress record until it is resolved or the wait ends.
// At most Options.MaxWaiters calls wait on one key at once.
func (o *op[Out]) wait(ctx context.Context, rec Record) (Out, error) {
	var zero Out
	opts := &o.g.opts
	if !o.g.waiters.enter(o.key, opts.MaxWaiters) {
		return zero, o.conflict(ctx, ErrInProgress, rec)
	}
	defer o.g.waiters.leave(o.key)
	// The wait is bounded in real time, whatever clock Options.Now is, and
	// ends a second before the invocation's deadline so that the duplicate
	// still answers.
	bound := opts.WaitTimeout
	if d, ok := ctx.Deadline(); ok {
		bound = min(bound, time.Until(d)-time.Second)
	}
	giveUp := time.NewTimer(max(bound, 0))
	defer giveUp.Stop()
	interval := opts.PollInterval
	for {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, o.conflict(ctx, ErrInProgress, rec)
		case <-giveUp.C:
			t.Stop()
			return zero, o.conflict(ctx, ErrInProgress, rec)
		case <-t.C:
		}
		interval = min(2*interval, time.Second)
		cur, err := o.g.store.Get(ctx, o.key, opts.Now())
		if err != nil {
			return zero, o.storeError(ctx, "get", err)
		}
		if cur.Status != StatusInProgress || Judge(cur, opts.Now(), opts.MaxRunTime) != VerdictHeld {
			return o.existing(ctx, cur)
		}
		rec = cur
	}
}

// reconcile resolves an UNKNOWN record with the Call's reconcile function,
// or answers [errReclaim] when the record was released (the effect did not
// happen) or resolved by someone else.
func (o *op[Out]) reconcile(ctx context.Context, rec Record, v Verdict) (Out, error) {
	var zero Out
	if o.c.Reconcile == nil {
		return zero, o.conflict(ctx, ErrOutcomeUnknown, rec)
	}
	// The reconcile function runs as an attempt at the operation: what it
	// stages (the business writes and messages the effect implies, which
	// the UNKNOWN attempt's process took with it) commits with a "done"
	// outcome in one transaction, under the operation's own message ids.
	a := &Attempt{operationKey: operationKey(rec.Key), since: rec.CreatedAt, number: rec.Attempts, mode: ClaimFirst,
		markExternal: func(context.Context, time.Duration) error { return errReconcileExternal }}
	defer a.close() // on a panic: later stages fail loudly
	out, done, err := o.c.Reconcile(withAttempt(ctx, a), Unknown{Key: rec.Key, OperationKey: operationKey(rec.Key), Attempts: rec.Attempts, Since: rec.CreatedAt, RenewedAt: rec.RenewedAt, Renews: rec.Renews,
		DispatchedAt: rec.DispatchedAt, DispatchWindow: rec.DispatchWindow})
	effects, _ := a.close()
	if err != nil {
		o.log(ctx, slog.LevelWarn, "reconcile failed", slog.Any("error", err))
		return zero, o.conflict(ctx, ErrOutcomeUnknown, rec)
	}
	// "Not done" is judged when it is answered, not when it was asked: a
	// slow reconcile that answers past the downstream's window (less the
	// clock-skew margin) asked a downstream that may have forgotten the
	// operation key, so the answer does not prove the effect did not
	// happen, and a redispatch could repeat it. An operator decides.
	if !done && (!v.Redispatchable() || !WithinWindow(rec.DispatchedAt, rec.DispatchWindow, o.g.opts.Now(), WindowMargin(o.g.opts.LeaseMargin, 0))) {
		err := fmt.Errorf("%w: %w: first dispatched at %s, the downstream deduplicates for %s; the record stays UNKNOWN for an operator",
			ErrOutcomeUnknown, ErrWindowPassed, rec.DispatchedAt.UTC().Format(time.RFC3339), rec.DispatchWindow)
		o.log(ctx, slog.LevelError, "reconcile said not done past the downstream's deduplication window: refused", slog.Any("error", err))
		return zero, o.conflict(ctx, err, rec)
	}
	if !done {
		if len(effects) > 0 {
			// Nothing happened: there is nothing to commit with.
			o.log(ctx, slog.LevelWarn, "reconcile said not done: its staged writes are dropped", slog.Int("staged", len(effects)))
		}
		fctx, cancel := o.finishContext(ctx)
		defer cancel()
		if _, err := o.g.store.Release(fctx, Fence{Key: rec.Key, Token: rec.Token}); err != nil {
			return zero, o.storeError(ctx, "release", err)
		}
		return zero, errReclaim // released, or resolved by someone else: look again
	}
	data, err := o.encode(ctx, out, nil)
	if err != nil {
		return zero, err
	}
	// The record's fingerprint is the call's (existing refused any other).
	_, stored, err := o.commit(ctx, rec.Token, rec, data, effects, false)
	switch {
	case errors.Is(err, ErrConditionFailed), errors.Is(err, ErrEffectRejected):
		o.log(ctx, slog.LevelWarn, "the store refused the writes a reconcile staged; nothing committed, the record stays UNKNOWN", slog.Any("error", err))
		return zero, &RejectedError{Key: o.key, Err: err}
	case err != nil:
		return zero, o.storeError(ctx, "commit", err)
	case !stored:
		// Resolved by someone else (another reconciler commits under the
		// same token, with an outcome of its own): look again and answer
		// with what is stored.
		return zero, errReclaim
	}
	return out, nil
}

// abandon ends a failed attempt: release the claim so a retry runs again,
// or, if an external effect began, keep the record as UNKNOWN.
func (o *op[Out]) abandon(ctx context.Context, f Fence, external bool) {
	opts := &o.g.opts
	fctx, cancel := o.finishContext(ctx)
	defer cancel()
	var ok bool
	var err error
	what := "release"
	if external {
		what = "mark unknown"
		ok, err = o.g.store.MarkUnknown(fctx, f)
	} else {
		ok, err = o.g.store.Release(fctx, f)
	}
	switch {
	case err != nil:
		o.storeError(ctx, what, err)
		o.log(ctx, slog.LevelError, what+" failed; the record stays in progress until its lease ends", slog.Any("error", err))
	case !ok:
		o.log(ctx, slog.LevelWarn, what+" fenced out: another attempt owns the record")
	case external:
		o.hook(ctx, opts.Hooks.OnUnknown, Record{Status: StatusUnknown})
	}
}

// releaseErrored gives back a claim whose Store.Claim returned an error:
// the write may have been applied and its answer lost (a lost response,
// then 5xx on every retry). Fenced on the token it claimed with, on the
// finish context, best effort: a release that finds no such claim changes
// nothing.
func (o *op[Out]) releaseErrored(ctx context.Context, token string) {
	fctx, cancel := o.finishContext(ctx)
	defer cancel()
	if ok, err := o.g.store.Release(fctx, Fence{Key: o.key, Token: token}); err != nil {
		o.log(ctx, slog.LevelWarn, "release after a failed claim failed", slog.Any("error", err))
	} else if ok {
		o.log(ctx, slog.LevelInfo, "released a claim whose answer was lost")
	}
}

// storedUntil is when a record just committed expires, for the local cache: the
// expiration the store returned with the record (stores keep it in whole
// seconds), else the one the commit asked for, cut to the second below, so
// that a cached replay never outlives the stored record.
func storedUntil(rec Record, asked time.Time) time.Time {
	if !rec.ExpiresAt.IsZero() && rec.ExpiresAt.Before(asked) {
		return rec.ExpiresAt
	}
	return asked.Truncate(time.Second)
}

func (o *op[Out]) failOpen(ctx context.Context, cause error) (Out, error) {
	var zero Out
	o.log(ctx, slog.LevelWarn, "store unavailable; running without idempotency (FailOpen)", slog.Any("error", cause))
	o.failedOpen(ctx, cause)
	a := &Attempt{operationKey: operationKey(o.key), since: o.g.opts.Now(), number: 0, mode: o.g.opts.Mode}
	out, err := o.invoke(ctx, a, nil)
	if effects, _ := a.close(); len(effects) > 0 {
		return zero, &StoreError{Op: "claim", Key: o.key, Err: fmt.Errorf("staged effects cannot be committed while failing open: %w", cause)}
	}
	return out, unmark(err)
}

func (o *op[Out]) replay(ctx context.Context, rec Record, from string) (Out, error) {
	out, err := o.decode(ctx, rec)
	var replayed *ReplayedError
	if err != nil && !errors.As(err, &replayed) {
		return out, o.unreadable(ctx, "stored outcome", err)
	}
	o.g.cache.put(rec)
	if h := o.g.opts.Hooks.OnReplay; h != nil {
		e := o.event(rec)
		e.From = from
		h(ctx, e)
	}
	o.log(ctx, slog.LevelInfo, "replayed", slog.String("from", from))
	return out, err
}

// sealerMissing refuses a sealed record met by a Guard without a Sealer.
func (o *op[Out]) sealerMissing(ctx context.Context, rec Record) error {
	return o.unreadable(ctx, "stored record", fmt.Errorf("%w (record %s, %s)", ErrSealerMissing, o.key, rec.Status))
}

// unreadable logs why what a stored record holds (its "stored outcome" or
// "stored fingerprint") could not be read, and returns err. A key the key
// service refused is an Error line naming the key and the action to
// grant: nothing heals it but an operator. A key service that is
// unavailable for now is a Warn line: the record stays and a retry
// answers from it.
func (o *op[Out]) unreadable(ctx context.Context, what string, err error) error {
	var keyID, action string
	if kse := (*KeyServiceError)(nil); errors.As(err, &kse) {
		keyID, action = kse.Key, kse.Action
	}
	switch {
	case errors.Is(err, ErrSealerMissing):
		o.log(ctx, slog.LevelError, what+" is sealed and this function has no Sealer: deploy it with the sealing the table's other functions use (lambdaidemcdk.BindSealing sets IDEMPOTENCY_SEAL_KEY; kmsseal.ReadEnv, Options.Sealer); the record stays as it is",
			slog.Any("error", err))
	case errors.Is(err, ErrKeyRefused):
		o.log(ctx, slog.LevelError, what+" cannot be opened: the key service refused its key; the record stays as it is, and is read once the role may call the action on the key and the key is enabled (not pending deletion)",
			slog.String("kms_key", keyID), slog.String("action", action), slog.Any("error", err))
	case errors.Is(err, ErrKeyUnavailable):
		o.log(ctx, slog.LevelWarn, what+" cannot be opened now: the key service is unavailable; the record stays as it is, and a retry reads it",
			slog.String("kms_key", keyID), slog.String("action", action), slog.Any("error", err))
	default:
		o.log(ctx, slog.LevelError, what+" unreadable", slog.Any("error", err))
	}
	return err
}

func (o *op[Out]) conflict(ctx context.Context, cond error, rec Record) error {
	err := recordError(cond, rec)
	err.Key = o.key
	if h := o.g.opts.Hooks.OnConflict; h != nil {
		h(ctx, o.event(rec), err)
	}
	o.log(ctx, slog.LevelInfo, "refused", slog.String("reason", cond.Error()), slog.String("status", string(rec.Status)))
	return err
}

func (o *op[Out]) encode(ctx context.Context, out Out, err error) ([]byte, error) {
	var data []byte
	var encErr error
	if err != nil {
		data, encErr = encodeError(unmark(err))
	} else {
		data, encErr = encodeValue(o.g.opts.Codec, out)
	}
	if encErr != nil {
		return nil, encErr
	}
	if len(data) > maxInflatedOutcome {
		return nil, fmt.Errorf("%w: %d bytes encoded, the limit is %d before compression", ErrOutcomeTooLarge, len(data), maxInflatedOutcome)
	}
	if !o.g.opts.NoCompression && len(data) > o.g.opts.CompressAbove {
		data = o.g.zip.compress(data)
	}
	if s := o.g.opts.Sealer; s != nil {
		if data, encErr = o.seal(ctx, s, data); encErr != nil {
			return nil, fmt.Errorf("lambdaidem: seal outcome: %w", encErr)
		}
	}
	if max := o.g.opts.MaxOutcomeSize; len(data) > max {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrOutcomeTooLarge, len(data), max)
	}
	return data, nil
}

// seal seals an encoded outcome on the finish context, as the commit that
// follows: a handler that returned past its deadline (Managed Instances run
// on) still has its outcome sealed when the Sealer needs a new data key. A
// key service that is unavailable for now (throttled, an internal error:
// a [*KeyServiceError] that is not Permanent) is asked again, with backoff,
// until the finish context ends: a seal that fails loses a known outcome
// (the staged writes are released and run again; after BeginExternal the
// record becomes UNKNOWN for a reconciler). A refusal is not retried.
func (o *op[Out]) seal(ctx context.Context, s Sealer, data []byte) ([]byte, error) {
	fctx, cancel := o.finishContext(ctx)
	defer cancel()
	backoff := sealBackoff
	for {
		sealed, err := s.Seal(fctx, o.key, data)
		var kse *KeyServiceError
		if err == nil || !errors.As(err, &kse) || kse.Permanent {
			return sealed, err
		}
		o.log(ctx, slog.LevelWarn, "key service unavailable while sealing the outcome; retrying until FinishTimeout",
			slog.String("kms_key", kse.Key), slog.String("action", kse.Action), slog.Any("error", err))
		t := time.NewTimer(backoff)
		select {
		case <-fctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// sealBackoff is the first wait before sealing again after a key service
// that was unavailable for now; it doubles up to a second.
const sealBackoff = 50 * time.Millisecond

// decode opens and decodes a stored outcome. It opens on the finish
// context: a duplicate whose invocation is past its deadline still answers
// with the outcome rather than with a key service timeout.
func (o *op[Out]) decode(ctx context.Context, rec Record) (Out, error) {
	data := rec.Outcome
	if o.g.opts.Sealer == nil && sealedRecord(rec) {
		var zero Out
		return zero, ErrSealerMissing
	}
	if s := o.g.opts.Sealer; s != nil {
		fctx, cancel := o.finishContext(ctx)
		var err error
		data, err = s.Open(fctx, rec.Key, data)
		cancel()
		if err != nil {
			var zero Out
			return zero, OpenFailure("open stored outcome", err)
		}
	}
	data, err := o.g.zip.inflate(data)
	if err != nil {
		var zero Out
		return zero, err
	}
	return decodeOutcome[Out](o.g.opts.Codec, data)
}

// leaseUntil is the deadline in ctx plus the margin, or now plus the
// fallback lease.
func (o *op[Out]) leaseUntil(ctx context.Context, now time.Time) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d.Add(o.g.opts.LeaseMargin)
	}
	return now.Add(o.g.opts.Lease)
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func (o *op[Out]) finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), o.g.opts.FinishTimeout)
}

func (o *op[Out]) event(rec Record) Event {
	return Event{Operation: o.c.Operation, Key: o.key, Status: rec.Status, Attempt: rec.Attempts, Since: rec.CreatedAt}
}

func (o *op[Out]) hook(ctx context.Context, h func(context.Context, Event), rec Record) {
	if h != nil {
		h(ctx, o.event(rec))
	}
}

func (o *op[Out]) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	l := o.g.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String("operation", o.c.Operation), slog.String("key", o.key))
	l.LogAttrs(ctx, level, "lambdaidem: "+msg, attrs...)
}

// unmark strips a Terminal marker so the caller sees its own error type.
func unmark(err error) error {
	if t, ok := err.(*terminalError); ok {
		return t.err
	}
	return err
}
