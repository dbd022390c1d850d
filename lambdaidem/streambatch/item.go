package streambatch

import (
	"context"
	"fmt"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// item is one record of a batch and what is needed to run it.
type item struct {
	rec Record
	run func(context.Context) error
	// key is the record key (a hash), for logs.
	key  string
	call lambdaidem.Call[struct{}]
	// malformed says why the record cannot be processed at all.
	malformed error
}

// prepare derives a record's key, scope and fingerprint. It never panics:
// a key, scope or fingerprint function that panics makes the record
// malformed.
func (a *Adapter) prepare(ctx context.Context, rec Record, run func(context.Context) error) (it *item) {
	it = &item{rec: rec, run: run}
	defer func() {
		if v := recover(); v != nil {
			it.malformed = fmt.Errorf("deriving the key, scope or fingerprint panicked: %v", v)
		}
	}()
	key, err := a.opts.Key(ctx, rec)
	if err == nil && key == "" {
		err = lambdaidem.ErrMissingKey
	}
	if err != nil {
		it.malformed = fmt.Errorf("key: %w", err)
		return it
	}
	var scope string
	if a.opts.Scope != nil {
		if scope, err = a.opts.Scope(ctx, rec); err != nil {
			it.malformed = fmt.Errorf("scope: %w", err)
			return it
		}
	}
	fp, err := a.opts.Fingerprint(ctx, rec)
	if err != nil {
		it.malformed = fmt.Errorf("fingerprint: %w", err)
		return it
	}
	it.key = lambdaidem.RecordKey(a.namespace, scope, a.operation, key)
	it.call = lambdaidem.Call[struct{}]{Operation: a.operation, Scope: scope, Key: key, Fingerprint: fp}
	if rc := a.opts.Reconcile; rc != nil {
		it.call.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (struct{}, bool, error) {
			done, err := rc(ctx, rec, u)
			return struct{}{}, done, err
		}
	}
	return it
}
