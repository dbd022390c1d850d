package sqsbatch_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// Where scoping is required (Options.Scope is set), a message whose scope
// cannot be derived is never run in a scope other messages share: it is
// reported for redelivery, with one error line, and the rest of the batch
// runs.
func TestScopeFailuresAreReportedForRedelivery(t *testing.T) {
	cases := map[string]func(context.Context, events.SQSMessage) (string, error){
		"an error": func(context.Context, events.SQSMessage) (string, error) {
			return "", errors.New("tenant directory unavailable")
		},
		"an empty scope": func(context.Context, events.SQSMessage) (string, error) { return "", nil },
		"a panic":        func(context.Context, events.SQSMessage) (string, error) { panic("tenant lookup") },
	}
	for name, failing := range cases {
		t.Run(name, func(t *testing.T) {
			var buf syncBuffer
			var runs atomic.Int32
			w := reviewWrap(t, func(ctx context.Context, m events.SQSMessage) error { runs.Add(1); return nil }, func(o *sqsbatch.Options) {
				o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
				o.Scope = func(ctx context.Context, m events.SQSMessage) (string, error) {
					if m.MessageAttributes["tenant"].StringValue == nil {
						return failing(ctx, m)
					}
					return *m.MessageAttributes["tenant"].StringValue, nil
				}
			})
			tenant := "t-1"
			ok := reviewMsg("ok", "", "k-1", false)
			ok.MessageAttributes = map[string]events.SQSMessageAttribute{"tenant": {DataType: "String", StringValue: &tenant}}
			bad := reviewMsg("no-tenant", "", "k-2", false)
			resp := invokeWithin(t, w, events.SQSEvent{Records: []events.SQSMessage{ok, bad}})
			if got := failedIDs(resp); !slices.Equal(got, []string{"no-tenant"}) || runs.Load() != 1 {
				t.Fatalf("failed %v after %d runs; want no-tenant reported and ok run", got, runs.Load())
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			var scopeLines []string
			for _, l := range lines {
				if strings.Contains(l, "scope could not be derived") {
					scopeLines = append(scopeLines, l)
				}
			}
			if len(scopeLines) != 1 || !strings.Contains(scopeLines[0], "level=ERROR") || !strings.Contains(scopeLines[0], "message_id=no-tenant") {
				t.Errorf("log %q: want one error line for no-tenant", buf.String())
			}
			// Redelivered, with its scope derivable now, it runs.
			tenant2 := "t-2"
			bad.MessageAttributes = map[string]events.SQSMessageAttribute{"tenant": {DataType: "String", StringValue: &tenant2}}
			if resp := invokeWithin(t, w, events.SQSEvent{Records: []events.SQSMessage{bad}}); len(resp.BatchItemFailures) != 0 || runs.Load() != 2 {
				t.Fatalf("redelivery: failed %v after %d runs", failedIDs(resp), runs.Load())
			}
		})
	}
}
