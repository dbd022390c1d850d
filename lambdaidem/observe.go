package lambdaidem

import (
	"context"
	"time"
)

// storeError builds the StoreError for a failed store call and reports it
// to Hooks.OnStoreError.
func (o *op[Out]) storeError(ctx context.Context, call string, err error) *StoreError {
	serr := &StoreError{Op: call, Key: o.key, Err: err}
	if h := o.g.opts.Hooks.OnStoreError; h != nil {
		h(ctx, o.event(Record{Key: o.key}), serr)
	}
	return serr
}

// committed reports to Hooks.OnCommit a commit that started at start and
// has just succeeded; rec is the record the commit completed.
func (o *op[Out]) committed(ctx context.Context, rec Record, start time.Time) {
	if h := o.g.opts.Hooks.OnCommit; h != nil {
		e := o.event(rec)
		e.Status = StatusCompleted
		e.Duration = max(o.g.opts.Now().Sub(start), 0)
		h(ctx, e)
	}
}

// failedOpen reports to Hooks.OnFailOpen an invocation answered without
// idempotency because the store failed with cause.
func (o *op[Out]) failedOpen(ctx context.Context, cause error) {
	if h := o.g.opts.Hooks.OnFailOpen; h != nil {
		h(ctx, o.event(Record{Key: o.key}), cause)
	}
}
