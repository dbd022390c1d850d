package streambatch_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// A panic in the handler or in a key function fails that record, not the
// process: the rest of the batch answers.
func TestPanicsFailTheRecord(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	tests := []struct {
		name string
		opts func(*streambatch.Options)
		h    func(context.Context, events.KinesisEventRecord) error
	}{
		{"handler", nil, func(_ context.Context, r events.KinesisEventRecord) error {
			if r.EventID == ev.Records[1].EventID {
				panic("boom")
			}
			return nil
		}},
		{"key function", func(o *streambatch.Options) {
			o.Key = func(_ context.Context, r streambatch.Record) (string, error) {
				if r.EventID == ev.Records[1].EventID {
					panic("boom")
				}
				return r.EventID, nil
			}
		}, func(context.Context, events.KinesisEventRecord) error { return nil }},
		{"fingerprint function", func(o *streambatch.Options) {
			o.Fingerprint = func(_ context.Context, r streambatch.Record) (string, error) {
				if r.EventID == ev.Records[1].EventID {
					panic("boom")
				}
				return "fp", nil
			}
		}, func(context.Context, events.KinesisEventRecord) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fns []func(*streambatch.Options)
			if tt.opts != nil {
				fns = append(fns, tt.opts)
			}
			resp, err := newAdapter(t, memstore.New(), fns...).Kinesis(tt.h)(t.Context(), ev)
			wantReported(t, resp, err, seqs(ev, 1))
		})
	}
}

// A store outage fails the first record of the shard and nothing after it
// runs: no effect escapes without its idempotency record.
func TestAStoreOutageFailsTheShardAtItsFirstRecord(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	store := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error { return fmt.Errorf("injected: %w", lambdaidem.ErrStoreUnavailable) }
	})
	l := newLedger()
	resp, err := newAdapter(t, store).Kinesis(l.kinesis)(t.Context(), ev)
	wantReported(t, resp, err, seqs(ev, 0))
	if got := l.ran(ev); !slices.Equal(got, []int{0, 0, 0, 0}) {
		t.Fatalf("runs %v: nothing runs without a claim", got)
	}
}

// The log names records by event id, sequence number and record key (a
// hash); it never holds the raw key or the record's data.
func TestTheLogHoldsNoKeyOrData(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := newLedger()
	l.setFail(ev.Records[1].EventID, errDownstream)
	h := newAdapter(t, memstore.New(), func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromDataField("transfer_id")
		o.Logger = logger
	}).Kinesis(l.kinesis)
	if _, err := h(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"t-1001", "t-1002", "EUR", string(ev.Records[0].Kinesis.Data)} {
		if strings.Contains(out, secret) {
			t.Errorf("log holds %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"handler failed", ev.Records[1].Kinesis.SequenceNumber, `"key":"lambdaidem#`, "shardId-000000000003"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
