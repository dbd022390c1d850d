package streambatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// A record whose staged writes fail a business condition at commit is
// reported by default (Lambda retries the shard from it); with
// ConditionFailed passing it, the shard goes on. Its record is never
// stored either way.
func TestConditionFailedAtCommit(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	missing := ev.Records[1].EventID
	cases := []struct {
		name    string
		hook    func(context.Context, streambatch.Record, error) bool
		want    []string
		records int // stored: the records run before the shard stopped, never the refused one
	}{
		{"default", nil, seqs(ev, 1), 1},
		{"passed", func(_ context.Context, r streambatch.Record, err error) bool {
			var cfe *memstore.ConditionFailedError
			return r.EventID == missing && errors.As(err, &cfe)
		}, nil, len(ev.Records) - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := memstore.New()
			h := newAdapter(t, store, func(o *streambatch.Options) { o.ConditionFailed = c.hook }).Kinesis(
				func(ctx context.Context, r events.KinesisEventRecord) error {
					if r.EventID == missing {
						return memstore.Stage(ctx, memstore.Check{Table: "accounts", Key: "acct-404"})
					}
					return nil
				})
			resp, err := h(t.Context(), ev)
			wantReported(t, resp, err, c.want)
			if n := len(store.Records()); n != c.records {
				t.Fatalf("%d records stored; want %d", n, c.records)
			}
		})
	}
}
