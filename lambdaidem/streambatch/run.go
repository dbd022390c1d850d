package streambatch

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lambdaidem/lambdaidem/internal/batchfail"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// run processes a batch in order and returns the sequence number of each
// lane's first failure, in batch order. A lane (one shard) stops at its
// first failure: its later records neither run nor are reported, since
// Lambda sends every record from the reported one again.
func (a *Adapter) run(ctx context.Context, items []*item) (failed []string, err error) {
	stopped := make(map[string]bool)
	for _, it := range items {
		lane := it.rec.lane()
		if stopped[lane] {
			a.log(ctx, slog.LevelDebug, "record not run: an earlier record of its shard failed in this batch", it)
			continue
		}
		if !a.process(ctx, it) {
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
func (a *Adapter) process(ctx context.Context, it *item) (failed bool) {
	var scope *batchfail.ScopeError
	switch {
	case errors.As(it.malformed, &scope):
		a.log(ctx, slog.LevelError, "scope could not be derived; not processed, will be retried", it, slog.Any("error", it.malformed))
		return true
	case it.malformed != nil:
		a.log(ctx, slog.LevelWarn, "malformed record; not processed", it, slog.Any("error", it.malformed))
		return true
	case ctx.Err() != nil:
		a.log(ctx, slog.LevelInfo, "record not run: the invocation ended before it was processed", it)
		return true
	}
	err := a.do(ctx, it)
	if err == nil {
		a.log(ctx, slog.LevelDebug, "record processed", it)
		return false
	}
	if errors.Is(err, lambdaidem.ErrConditionFailed) && a.opts.ConditionFailed != nil && a.opts.ConditionFailed(ctx, it.rec, err) {
		a.log(ctx, slog.LevelInfo, "a business condition of the staged writes failed; passed by ConditionFailed, nothing written", it, slog.Any("error", err))
		return false
	}
	level, what := classify(err)
	a.log(ctx, level, what, it, slog.Any("error", err))
	return true
}

// do runs the handler under the guard. A panic in the handler, which the
// guard re-raises after releasing the claim, becomes an error: it fails
// this record, not the process and the rest of the batch.
func (a *Adapter) do(ctx context.Context, it *item) error {
	return batchfail.Recover("streambatch", func() error {
		if a.g == nil {
			return it.run(ctx) // Unguarded
		}
		_, err := lambdaidem.Do(ctx, a.g, it.call, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, it.run(ctx)
		})
		return err
	})
}

// words are this adapter's names in its log lines.
var words = batchfail.Words{Item: "record", Payload: "payload", Attempt: "attempt", Retry: "Lambda will retry",
	Dead: "holds its shard until it reaches the on-failure destination or expires"}

// classify names why a record failed, and how loudly to say it.
func classify(err error) (slog.Level, string) { return batchfail.Classify(err, words) }

// log writes one line about a record: its event id, sequence number and
// record key, never its data or raw key.
func (a *Adapter) log(ctx context.Context, level slog.Level, msg string, it *item, attrs ...slog.Attr) {
	l := a.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs,
		slog.String("operation", a.operation),
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
