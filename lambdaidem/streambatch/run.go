package streambatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// run processes a batch in order and returns the sequence number of each
// lane's first failure, in batch order. A lane (one shard) stops at its
// first failure: its later records neither run nor are reported, since
// Lambda sends every record from the reported one again.
func (p *Processor) run(ctx context.Context, items []*item) (failed []string, err error) {
	stopped := make(map[string]bool)
	for _, it := range items {
		lane := it.rec.lane()
		if stopped[lane] {
			p.log(ctx, slog.LevelDebug, "record not run: an earlier record of its shard failed in this batch", it)
			continue
		}
		if !p.process(ctx, it) {
			continue
		}
		stopped[lane] = true
		if it.rec.SequenceNumber == "" {
			err = ErrUnreportable
			continue
		}
		failed = append(failed, it.rec.SequenceNumber)
	}
	return failed, err
}

// process runs one record and reports whether it failed.
func (p *Processor) process(ctx context.Context, it *item) (failed bool) {
	switch {
	case it.malformed != nil:
		p.log(ctx, slog.LevelWarn, "malformed record; not processed", it, slog.Any("error", it.malformed))
		return true
	case ctx.Err() != nil:
		p.log(ctx, slog.LevelInfo, "record not run: the invocation ended before it was processed", it)
		return true
	}
	err := p.do(ctx, it)
	if err == nil {
		p.log(ctx, slog.LevelDebug, "record processed", it)
		return false
	}
	level, what := classify(err)
	p.log(ctx, level, what, it, slog.Any("error", err))
	return true
}

// do runs the handler under the guard. A panic in the handler, which the
// guard re-raises after releasing the claim, becomes an error: it fails
// this record, not the process and the rest of the batch.
func (p *Processor) do(ctx context.Context, it *item) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v}
		}
	}()
	_, err = lambdaidem.Do(ctx, p.g, it.call, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, it.run(ctx)
	})
	return err
}

type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("streambatch: handler panicked: %v", e.value) }

// classify names why a record failed, and how loudly to say it.
func classify(err error) (slog.Level, string) {
	var replayed *lambdaidem.ReplayedError
	var store *lambdaidem.StoreError
	var pe *panicError
	switch {
	case errors.As(err, &pe):
		return slog.LevelError, "handler panicked; claim released"
	case errors.As(err, &replayed):
		return slog.LevelWarn, "terminal error replayed from an earlier attempt; not run again"
	case errors.Is(err, lambdaidem.ErrKeyReused):
		return slog.LevelWarn, "key reused with a different payload; not processed"
	case errors.Is(err, lambdaidem.ErrInProgress):
		return slog.LevelInfo, "in progress in another invocation; Lambda will retry"
	case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
		return slog.LevelWarn, "outcome unknown after an earlier external effect; awaiting reconcile"
	case errors.Is(err, lambdaidem.ErrLeaseLost):
		return slog.LevelWarn, "lease lost to another attempt; nothing committed"
	case errors.Is(err, lambdaidem.ErrMissingKey), errors.Is(err, lambdaidem.ErrInvalidKey):
		return slog.LevelWarn, "malformed record; not processed"
	case errors.Is(err, lambdaidem.ErrEffectRejected):
		return slog.LevelWarn, "staged writes rejected; nothing committed"
	case errors.As(err, &store):
		return slog.LevelError, "idempotency store failed; Lambda will retry"
	}
	return slog.LevelWarn, "handler failed; claim released"
}

// log writes one line about a record: its event id, sequence number and
// record key, never its data or raw key.
func (p *Processor) log(ctx context.Context, level slog.Level, msg string, it *item, attrs ...slog.Attr) {
	l := p.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs,
		slog.String("operation", p.operation),
		slog.String("event_id", it.rec.EventID),
		slog.String("sequence_number", it.rec.SequenceNumber))
	if it.rec.Shard != "" {
		attrs = append(attrs, slog.String("shard", it.rec.Shard))
	}
	if it.key != "" {
		attrs = append(attrs, slog.String("key", it.key))
	}
	l.LogAttrs(ctx, level, "streambatch: "+msg, attrs...)
}
