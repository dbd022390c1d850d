package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/batchfail"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// item is one record of a batch and what became of it. Only the goroutine
// running its lane writes to it, until the lanes are done.
type item struct {
	msg *events.SQSMessage
	// fifo is set for a message of a FIFO queue; group is its message group.
	fifo  bool
	group string
	// key is the record key, a hash: the lane of a standard queue's message,
	// the lock of every message.
	key  string
	call lambdaidem.Call[struct{}]
	// malformed says why the message cannot be processed at all.
	malformed error

	failed bool
}

// prepare derives a record's key, scope and fingerprint. It never panics:
// a KeyFunc that panics makes the message malformed; a Scope that panics,
// fails or returns an empty scope makes it a scope failure. Either way the
// message is reported for redelivery and not run.
func (w *wrapper) prepare(ctx context.Context, m *events.SQSMessage) (it *item) {
	it = &item{msg: m, fifo: strings.HasSuffix(m.EventSourceARN, ".fifo"), group: m.Attributes["MessageGroupId"]}
	defer func() {
		if p := recover(); p != nil {
			it.malformed = fmt.Errorf("deriving the key panicked: %v", p)
		}
	}()
	key, err := w.opts.Key(ctx, *m)
	if err == nil && key == "" {
		err = lambdaidem.ErrMissingKey
	}
	if err != nil {
		it.malformed = fmt.Errorf("key: %w", err)
		return it
	}
	var scope string
	if w.opts.Scope != nil {
		if scope, err = batchfail.Scope(ctx, w.opts.Scope, *m, errEmptyScope); err != nil {
			it.malformed = err
			return it
		}
	}
	fp, err := Fingerprint(*m, w.opts.FingerprintAttributes...)
	if err != nil {
		it.malformed = fmt.Errorf("fingerprint: %w", err)
		return it
	}
	it.key = lambdaidem.TenantRecordKey(w.namespace, lambdaidem.Tenant(ctx), scope, w.operation, key)
	it.call = lambdaidem.Call[struct{}]{Operation: w.operation, Scope: scope, Key: key, Fingerprint: fp}
	if rec := w.opts.Reconcile; rec != nil {
		it.call.Reconcile = w.reconcile(m, rec)
	}
	return it
}

// errEmptyScope: a Scope function returned no scope. Where scoping is
// required (Options.Scope is set), running the message in the scope every
// such message would share could hand it another tenant's record.
var errEmptyScope = errors.New("sqsbatch: Scope returned an empty scope")
