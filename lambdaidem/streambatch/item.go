package streambatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/lambdaidem/lambdaidem/internal/batchfail"
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
// a key or fingerprint function that panics makes the record malformed; a
// Scope that panics, fails or returns an empty scope makes it a scope
// failure. Either way the record is reported and not run.
func (a *Adapter) prepare(ctx context.Context, rec Record, run func(context.Context) error) (it *item) {
	it = &item{rec: rec, run: run}
	if a.g == nil {
		return it // Unguarded: no key, scope or fingerprint
	}
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
		if scope, err = batchfail.Scope(ctx, a.opts.Scope, rec, errEmptyScope); err != nil {
			it.malformed = err
			return it
		}
	}
	fp, err := a.opts.Fingerprint(ctx, rec)
	if err != nil {
		it.malformed = fmt.Errorf("fingerprint: %w", err)
		return it
	}
	it.key = lambdaidem.TenantRecordKey(a.namespace, lambdaidem.Tenant(ctx), scope, a.operation, key)
	it.call = lambdaidem.Call[struct{}]{Operation: a.operation, Scope: scope, Key: key, Fingerprint: fp}
	if rc := a.opts.Reconcile; rc != nil {
		it.call.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (struct{}, bool, error) {
			done, err := rc(ctx, rec, u)
			return struct{}{}, done, err
		}
	}
	return it
}

// errEmptyScope: a Scope function returned no scope. Where scoping is
// required (Options.Scope is set), running the record in the scope every
// unscoped record shares could mix tenants: it fails closed instead.
var errEmptyScope = errors.New("streambatch: Scope returned an empty scope")
