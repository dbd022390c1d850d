package streambatch_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// TestUnguarded: without a Guard the adapter keeps its batch rules: records
// run in order, the first failure is reported and the records after it do
// not run; a panic fails its record; a complete success reports nothing.
// Every run of a record runs it (there is no record to replay from).
func TestUnguarded(t *testing.T) {
	ev := events.DynamoDBEvent{}
	for _, seq := range []string{"100", "200", "300", "400"} {
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventID: "e" + seq, EventSourceArn: "arn:stream", Change: events.DynamoDBStreamRecord{SequenceNumber: seq}})
	}
	cases := []struct {
		name     string
		fail     string // sequence number whose record fails
		panics   bool
		ran      []string
		reported []string
	}{
		{"all succeed", "", false, []string{"100", "200", "300", "400"}, nil},
		{"third fails", "300", false, []string{"100", "200", "300"}, []string{"300"}},
		{"second panics", "200", true, []string{"100", "200"}, []string{"200"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []string
			h := streambatch.Unguarded().DynamoDB(func(_ context.Context, r events.DynamoDBEventRecord) error {
				ran = append(ran, r.Change.SequenceNumber)
				if r.Change.SequenceNumber == c.fail {
					if c.panics {
						panic("boom")
					}
					return errors.New("failed")
				}
				return nil
			})
			for range 2 { // a redelivery runs the records again
				ran = nil
				resp, err := h(context.Background(), ev)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range resp.BatchItemFailures {
					got = append(got, f.ItemIdentifier)
				}
				if !slices.Equal(ran, c.ran) || !slices.Equal(got, c.reported) {
					t.Errorf("ran %v, reported %v; want %v, %v", ran, got, c.ran, c.reported)
				}
			}
		})
	}
}
