package dynamostore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestDownstreamWindowOverTheSDK: the external mark writes the first
// dispatch's time and the downstream's window (dispatched_at,
// dispatch_window); on the manual clock, a reconcile's "not done" 1 ms
// before the window's end less the clock-skew margin (LeaseMargin, 5 s by
// default) releases the record and the operation runs again; from there
// on it is refused with ErrWindowPassed and the record stays UNKNOWN.
func TestDownstreamWindowOverTheSDK(t *testing.T) {
	const window = 24 * time.Hour
	for _, c := range []struct {
		name  string
		after time.Duration
		rerun bool
	}{
		{"1ms before the edge", window - 5*time.Second - time.Millisecond, true},
		{"at the edge", window - 5*time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			clk := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			g := e.guard(t, clk)
			first := clk.Now()
			_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternalWithin(ctx, window); err != nil {
					return "", err
				}
				return "", errors.New("provider timed out")
			})
			if err == nil {
				t.Fatal("want the handler's error")
			}
			item := e.record(t, recordKey("k"))
			if num(item, "dispatched_at") != itoa(first.UnixMilli()) || num(item, "dispatch_window") != itoa(window.Milliseconds()) {
				t.Fatalf("record item %v: want dispatched_at and dispatch_window", item)
			}
			clk.Advance(c.after)
			cl := call("k")
			cl.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) { return "", false, nil }
			ran := false
			_, err = lambdaidem.Do(context.Background(), g, cl, func(context.Context) (string, error) { ran = true; return "again", nil })
			if ran != c.rerun || (err == nil) != c.rerun || !c.rerun && !errors.Is(err, lambdaidem.ErrWindowPassed) {
				t.Fatalf("ran %v, %v; want ran %v", ran, err, c.rerun)
			}
			if !c.rerun {
				s, _ := e.record(t, recordKey("k"))["status"].(*types.AttributeValueMemberS)
				if s == nil || s.Value != "UNKNOWN" || !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
					t.Fatalf("record status %v after the refusal, %v; want UNKNOWN, ErrOutcomeUnknown", s, err)
				}
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
