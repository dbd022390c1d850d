package streambatch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// FuzzKinesisBatch feeds batches of arbitrary data, keys and failures and
// checks the stream contract: the answer names exactly the sequence number
// of the first failure (no record after it runs); the retry from there
// completes the batch; each record's effect happens once; nothing panics.
func FuzzKinesisBatch(f *testing.F) {
	f.Add([]byte(`{"transfer_id":"t-1"}`), []byte(`{"transfer_id":"t-2"}`), []byte("\xff"), uint8(0b010), true)
	f.Add([]byte(`{"transfer_id":"t-1"}`), []byte(`{"transfer_id":"t-1"}`), []byte(`{"transfer_id":1}`), uint8(0b100), true)
	f.Add([]byte(`[]`), []byte(`null`), []byte(``), uint8(0), false)
	f.Add([]byte(`{"transfer_id":"t-1"}`), []byte(`{"transfer_id":"t-1","amount":2}`), []byte(`{}`), uint8(0), true)
	f.Fuzz(func(t *testing.T, d0, d1, d2 []byte, failMask uint8, byField bool) {
		var ev events.KinesisEvent
		for i, d := range [][]byte{d0, d1, d2} {
			r := events.KinesisEventRecord{EventSourceArn: "arn:aws:kinesis:eu-west-1:111122223333:stream/fuzz"}
			r.Kinesis.SequenceNumber = fmt.Sprintf("4965657310233947418761834029154802193285124900438071710%d", i)
			r.EventID = "shardId-000000000000:" + r.Kinesis.SequenceNumber
			r.Kinesis.Data = d
			ev.Records = append(ev.Records, r)
		}
		store := memstore.New()
		fail := map[string]bool{}
		runs := map[string]int{}
		p := newAdapter(t, store, func(o *streambatch.Options) {
			if byField {
				o.Key = streambatch.KeyFromDataField("transfer_id")
			}
		})
		h := p.Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
			runs[r.EventID]++
			if fail[r.EventID] {
				return errDownstream
			}
			return memstore.Stage(ctx, memstore.Put{Table: "ledger", Key: r.EventID})
		})
		keyOf := func(r events.KinesisEventRecord) (string, bool) {
			if !byField {
				return "", true
			}
			k, err := streambatch.KeyFromDataField("transfer_id")(t.Context(), streambatch.Record{Kinesis: &r})
			return k, err == nil
		}
		for i, r := range ev.Records {
			fail[r.EventID] = failMask&(1<<i) != 0
		}
		// Expected: the first record that fails its handler or has no key.
		// A record with the key of an earlier one replays it if their
		// fingerprints match, and is refused (the key reused) if not.
		firstBad, fixable := -1, false
		seen := map[string]string{} // key → fingerprint
		for i, r := range ev.Records {
			k, ok := keyOf(r)
			fp, _ := streambatch.Fingerprint(t.Context(), streambatch.Record{Kinesis: &r})
			prev, dup := seen[k]
			dup = dup && byField && ok
			if !dup {
				seen[k] = fp
			}
			if !ok || (dup && prev != fp) || (!dup && fail[r.EventID]) {
				firstBad, fixable = i, ok && !dup
				break
			}
		}
		resp, err := h(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		if firstBad >= 0 {
			want = seqs(ev, firstBad)
			for _, r := range ev.Records[firstBad+1:] {
				if runs[r.EventID] != 0 {
					t.Fatalf("a record after the failure ran")
				}
			}
		}
		if got := reported(resp); !slices.Equal(got, want) {
			t.Fatalf("reported %v, want %v", got, want)
		}
		// The retry, failures fixed, from the checkpoint.
		clear(fail)
		if firstBad >= 0 {
			resp, err = h(t.Context(), from(ev, firstBad))
			if err != nil {
				t.Fatal(err)
			}
			// Only a record without a key, or one reusing a key with other
			// data, fails again.
			for _, f := range resp.BatchItemFailures {
				if fixable && f.ItemIdentifier == ev.Records[firstBad].Kinesis.SequenceNumber {
					t.Fatalf("the fixed record failed again: %+v", resp)
				}
			}
		}
		for id, n := range runs {
			// A record runs again only after its own failure released it.
			if n > 2 {
				t.Fatalf("record %s ran %d times", id, n)
			}
		}
	})
}
