package sqsbatch

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/batchfail"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// process runs one message through the guard and records its result.
func (w *wrapper) process(ctx context.Context, it *item, locks *keyLocks) {
	var scope *batchfail.ScopeError
	switch {
	case errors.As(it.malformed, &scope):
		it.failed = true
		w.log(ctx, slog.LevelError, "scope could not be derived; not processed, will be redelivered", it, slog.Any("error", it.malformed))
		return
	case it.malformed != nil:
		it.failed = true
		w.log(ctx, slog.LevelWarn, "malformed message; not processed", it, slog.Any("error", it.malformed))
		return
	}
	unlock := locks.lock(it.key)
	defer unlock()
	err := w.do(ctx, it)
	if err == nil {
		w.log(ctx, slog.LevelDebug, "message processed", it)
		return
	}
	if errors.Is(err, lambdaidem.ErrConditionFailed) && w.opts.ConditionFailed != nil && w.opts.ConditionFailed(ctx, *it.msg, err) {
		w.log(ctx, slog.LevelInfo, "a business condition of the staged writes failed; acknowledged by ConditionFailed, nothing written", it, slog.Any("error", err))
		return
	}
	it.failed = true
	level, what := classify(err)
	w.log(ctx, level, what, it, slog.Any("error", err))
}

// do runs the handler under the guard. A panic in the handler, which the
// guard re-raises after releasing the claim, becomes an error: it fails
// this message, not the process and the other messages of the batch.
func (w *wrapper) do(ctx context.Context, it *item) error {
	return batchfail.Recover("sqsbatch", func() error {
		_, err := lambdaidem.Do(ctx, w.g, it.call, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, w.h(ctx, *it.msg)
		})
		return err
	})
}

// skip fails a message without running it.
func (w *wrapper) skip(ctx context.Context, it *item, why string) {
	it.failed = true
	w.log(ctx, slog.LevelInfo, "message not run: "+why, it)
}

// words are this adapter's names in its log lines.
var words = batchfail.Words{Item: "message", Payload: "body", Attempt: "delivery", Retry: "will be redelivered",
	Dead: "will reach the dead-letter queue (or be dropped, without one)"}

// classify names why a message failed, and how loudly to say it.
func classify(err error) (slog.Level, string) { return batchfail.Classify(err, words) }

// log writes one line about a message: its id and record key, never its
// body or raw key.
func (w *wrapper) log(ctx context.Context, level slog.Level, msg string, it *item, attrs ...slog.Attr) {
	l := w.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String("operation", w.operation), slog.String("message_id", it.msg.MessageId))
	if it.key != "" {
		attrs = append(attrs, slog.String("key", it.key))
	}
	if it.fifo {
		attrs = append(attrs, slog.String("message_group", it.group))
	}
	l.LogAttrs(ctx, level, "sqsbatch: "+msg, attrs...)
}

// reconcile adapts Options.Reconcile to the message m.
func (w *wrapper) reconcile(m *events.SQSMessage, rec func(context.Context, events.SQSMessage, lambdaidem.Unknown) (bool, error)) func(context.Context, lambdaidem.Unknown) (struct{}, bool, error) {
	return func(ctx context.Context, u lambdaidem.Unknown) (struct{}, bool, error) {
		done, err := rec(ctx, *m, u)
		return struct{}{}, done, err
	}
}
