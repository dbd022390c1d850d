package batchfail_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/internal/batchfail"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// What on-call must see at the default level (Error) is logged at Error: a
// key reused by another item fails every try until the dead-letter queue,
// and a sealed outcome whose key is refused fails until an operator acts.
// A key service unavailable for now heals by itself (Warn).
func TestClassify(t *testing.T) {
	w := batchfail.Words{Item: "message", Payload: "body", Attempt: "delivery", Retry: "will be redelivered", Dead: "will reach the dead-letter queue"}
	cases := []struct {
		err   error
		level slog.Level
		says  string
	}{
		{&lambdaidem.RecordError{Err: lambdaidem.ErrKeyReused}, slog.LevelError, "dead-letter queue"},
		{fmt.Errorf("%w: open: %w", lambdaidem.ErrKeyRefused, &lambdaidem.KeyServiceError{Permanent: true}), slog.LevelError, "refused its key"},
		{fmt.Errorf("%w: open: %w", lambdaidem.ErrKeyUnavailable, &lambdaidem.KeyServiceError{}), slog.LevelWarn, "will be redelivered"},
		{&lambdaidem.RecordError{Err: lambdaidem.ErrInProgress}, slog.LevelInfo, "in progress"},
	}
	for _, c := range cases {
		level, what := batchfail.Classify(c.err, w)
		if level != c.level || !strings.Contains(what, c.says) {
			t.Errorf("Classify(%v) = %v %q; want %v, saying %q", c.err, level, what, c.level, c.says)
		}
	}
}
