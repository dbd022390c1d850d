package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// FuzzBatch feeds arbitrary SQS events to wrapped handlers with every key
// helper: the batch handler never panics, reports only message ids of the
// batch, each once, and returns an error only for a failed message that
// has no id.
func FuzzBatch(f *testing.F) {
	for _, name := range []string{"standard.json", "fifo.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"Records":[{"messageId":"a","body":"{\"order_id\":{}}"},{"messageId":"a","body":"{\"order_id\":\"x\"}"}]}`))
	f.Add([]byte(`{"Records":[{"messageId":"","body":"x","eventSourceARN":"q.fifo","attributes":{"MessageGroupId":"g"}}]}`))
	f.Add([]byte(`{"Records":[{"messageId":"b","body":"{\"order_id\":\"` + strings.Repeat("k", 300) + `\"}"}]}`))
	f.Add([]byte(`{"Records":[{"messageId":"c","body":"\xff","messageAttributes":{"idempotency-key":{"dataType":"Binary","binaryValue":"AQID"}}}]}`))
	f.Add([]byte(`{"Records":null}`))

	keys := []sqsbatch.KeyFunc{
		sqsbatch.KeyFromMessageID,
		sqsbatch.KeyFromDeduplicationID,
		sqsbatch.KeyFromAttribute("idempotency-key"),
		sqsbatch.KeyFromJSONField("order_id"),
		sqsbatch.KeyFromJSONField("order.id"),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev events.SQSEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return
		}
		g, err := lambdaidem.New(memstore.New())
		if err != nil {
			t.Fatal(err)
		}
		h := func(ctx context.Context, m events.SQSMessage) error {
			if strings.Contains(m.Body, "fail") {
				return errors.New("refused")
			}
			if strings.Contains(m.Body, "panic") {
				panic("handler panic")
			}
			return nil
		}
		for _, key := range keys {
			wrapped, err := wrapBatch(g, "Fuzz", h, func(o *sqsbatch.Options) {
				o.Key = key
				o.FingerprintAttributes = []string{"idempotency-key"}
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			resp, err := wrapped(ctx, ev)
			cancel()
			if err != nil {
				if !errors.Is(err, sqsbatch.ErrUnreportable) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			var seen []string
			for _, f := range resp.BatchItemFailures {
				if slices.Contains(seen, f.ItemIdentifier) {
					t.Fatalf("%q reported twice", f.ItemIdentifier)
				}
				seen = append(seen, f.ItemIdentifier)
				if !slices.ContainsFunc(ev.Records, func(m events.SQSMessage) bool { return m.MessageId == f.ItemIdentifier }) {
					t.Fatalf("reported %q, not in the batch", f.ItemIdentifier)
				}
			}
		}
	})
}
