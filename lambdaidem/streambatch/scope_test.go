package streambatch_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// Where scoping is required (Options.Scope is set), a record whose scope
// cannot be derived is never run in a scope other records share (the
// empty one): it is reported, so that Lambda retries the shard from it,
// with one error line naming it, as sqsbatch does for a message. Once its
// scope can be derived, the retry runs it.
func TestScopeFailuresAreReportedForRetry(t *testing.T) {
	cases := map[string]func(context.Context, streambatch.Record) (string, error){
		"an error": func(context.Context, streambatch.Record) (string, error) {
			return "", errors.New("tenant directory unavailable")
		},
		"an empty scope": func(context.Context, streambatch.Record) (string, error) { return "", nil },
		"a panic":        func(context.Context, streambatch.Record) (string, error) { panic("tenant lookup") },
	}
	for name, failing := range cases {
		t.Run(name, func(t *testing.T) {
			ev := loadKinesis(t, "kinesis.json")
			var mu sync.Mutex
			var buf bytes.Buffer
			derivable := false
			l := newLedger()
			h := newAdapter(t, memstore.New(), func(o *streambatch.Options) {
				o.Logger = slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, nil))
				o.Scope = func(ctx context.Context, r streambatch.Record) (string, error) {
					if r.EventID == ev.Records[1].EventID && !derivable {
						return failing(ctx, r)
					}
					return "tenant-1", nil
				}
			}).Kinesis(l.kinesis)
			resp, err := h(t.Context(), ev)
			wantReported(t, resp, err, seqs(ev, 1))
			if got := l.ran(ev); !slices.Equal(got, []int{1, 0, 0, 0}) {
				t.Fatalf("runs %v: the record without a scope must not run, nor the shard after it", got)
			}
			var lines []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if strings.Contains(line, "scope could not be derived") {
					lines = append(lines, line)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], ev.Records[1].Kinesis.SequenceNumber) {
				t.Errorf("log %q: want one error line naming the record", buf.String())
			}
			// Retried from the failed record, with its scope derivable now.
			derivable = true
			resp, err = h(t.Context(), from(ev, 1))
			wantReported(t, resp, err, nil)
			if got := l.ran(ev); !slices.Equal(got, []int{1, 1, 1, 1}) {
				t.Fatalf("runs after the retry %v, want each once", got)
			}
		})
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
