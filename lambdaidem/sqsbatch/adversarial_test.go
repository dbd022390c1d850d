package sqsbatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

func reviewMsg(id, group, key string, fifo bool) events.SQSMessage {
	arn := "arn:aws:sqs:eu-west-1:123456789012:orders"
	if fifo {
		arn += ".fifo"
	}
	return events.SQSMessage{
		MessageId:      id,
		Body:           `{"k":"` + key + `"}`,
		EventSourceARN: arn,
		Attributes:     map[string]string{"MessageGroupId": group},
	}
}

func reviewWrap(t *testing.T, h func(context.Context, events.SQSMessage) error, optFns ...func(*sqsbatch.Options)) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	t.Helper()
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	optFns = append([]func(*sqsbatch.Options){func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromJSONField("k") }}, optFns...)
	w, err := wrapBatch(g, "Review", h, optFns...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// invokeWithin fails the test if the batch does not finish in time: a
// deadlock in the lanes or the key locks.
func invokeWithin(t *testing.T, w func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	type result struct {
		resp events.SQSEventResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := w(context.Background(), ev)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.resp
	case <-time.After(10 * time.Second):
		t.Fatal("batch did not finish: deadlock")
	}
	return events.SQSEventResponse{}
}

// FIFO groups whose keys overlap in opposite orders neither deadlock nor
// run one key twice, at any concurrency.
func TestFIFOGroupsWithCrossedKeys(t *testing.T) {
	for _, conc := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			var mu sync.Mutex
			runs := map[string]int{}
			var active, peak atomic.Int32
			w := reviewWrap(t, func(ctx context.Context, m events.SQSMessage) error {
				n := active.Add(1)
				defer active.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				runs[m.Body]++
				mu.Unlock()
				return nil
			}, func(o *sqsbatch.Options) { o.Concurrency = conc })
			var ev events.SQSEvent
			i := 0
			for _, g := range []struct {
				group string
				keys  []string
			}{{"A", []string{"k1", "k2", "k3"}}, {"B", []string{"k3", "k2", "k1"}}, {"C", []string{"k2", "k4"}}, {"D", []string{"k4", "k1"}}} {
				for _, k := range g.keys {
					i++
					ev.Records = append(ev.Records, reviewMsg(fmt.Sprintf("m%d", i), g.group, k, true))
				}
			}
			resp := invokeWithin(t, w, ev)
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures: %v", resp.BatchItemFailures)
			}
			for k, n := range runs {
				if n != 1 {
					t.Errorf("%s ran %d times", k, n)
				}
			}
			if len(runs) != 4 {
				t.Errorf("ran %d keys, want 4", len(runs))
			}
			if p := peak.Load(); int(p) > conc {
				t.Errorf("peak concurrency %d above the bound %d", p, conc)
			}
		})
	}
}

// Many messages with one key in a standard batch run the handler once and
// all succeed.
func TestStandardBatchSameKeyRunsOnce(t *testing.T) {
	var runs atomic.Int32
	w := reviewWrap(t, func(ctx context.Context, m events.SQSMessage) error {
		runs.Add(1)
		time.Sleep(time.Millisecond)
		return nil
	})
	var ev events.SQSEvent
	for i := range 30 {
		ev.Records = append(ev.Records, reviewMsg(fmt.Sprintf("m%d", i), "", fmt.Sprintf("k%d", i%3), false))
	}
	resp := invokeWithin(t, w, ev)
	if len(resp.BatchItemFailures) != 0 || runs.Load() != 3 {
		t.Fatalf("runs %d, failures %v", runs.Load(), resp.BatchItemFailures)
	}
}

// In a FIFO group, everything after the first failure is reported failed
// without running, completed duplicates included; other groups go on; and
// the message before the failure is not reported.
func TestFIFOFailureFailsTheRestOfItsGroupOnly(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	w := reviewWrap(t, func(ctx context.Context, m events.SQSMessage) error {
		mu.Lock()
		ran = append(ran, m.MessageId)
		mu.Unlock()
		if m.Body == `{"k":"bad"}` {
			return errors.New("boom")
		}
		return nil
	})
	ev := events.SQSEvent{Records: []events.SQSMessage{
		reviewMsg("a1", "A", "k1", true),
		reviewMsg("a2", "A", "bad", true),
		reviewMsg("a3", "A", "k2", true),
		reviewMsg("a4", "A", "k1", true), // a completed duplicate, after the failure
		reviewMsg("b1", "B", "k3", true),
		reviewMsg("b2", "B", "k4", true),
	}}
	resp := invokeWithin(t, w, ev)
	if got, want := failedIDs(resp), []string{"a2", "a3", "a4"}; !slices.Equal(got, want) {
		t.Fatalf("failed %v, want %v", got, want)
	}
	slices.Sort(ran)
	if want := []string{"a1", "a2", "b1", "b2"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
}

// A key or scope function that panics fails its message, not the batch.
func TestPanickingKeyAndScopeFailOnlyTheirMessage(t *testing.T) {
	var runs atomic.Int32
	w := reviewWrap(t, func(ctx context.Context, m events.SQSMessage) error { runs.Add(1); return nil }, func(o *sqsbatch.Options) {
		o.Key = func(_ context.Context, m events.SQSMessage) (string, error) {
			if m.MessageId == "p1" {
				panic("key")
			}
			return m.MessageId, nil
		}
		o.Scope = func(_ context.Context, m events.SQSMessage) (string, error) {
			if m.MessageId == "p2" {
				panic("scope")
			}
			return "tenant-1", nil
		}
	})
	ev := events.SQSEvent{Records: []events.SQSMessage{reviewMsg("ok1", "", "x", false), reviewMsg("p1", "", "y", false), reviewMsg("p2", "", "z", false)}}
	resp := invokeWithin(t, w, ev)
	if got := failedIDs(resp); !slices.Equal(got, []string{"p1", "p2"}) || runs.Load() != 1 {
		t.Fatalf("failed %v, runs %d", got, runs.Load())
	}
}
