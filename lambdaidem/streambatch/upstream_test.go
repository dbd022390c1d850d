package streambatch_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// upstream reads an event fixture of aws-lambda-go itself (its
// events/testdata, in the module cache), so that the adapters meet the
// shapes the library's own tests pin, not only ours. It skips when the
// module's folder cannot be found.
func upstream(t *testing.T, name string, v any) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("aws-lambda-go's module folder not found (%v)", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "events", "testdata", name))
	if err != nil {
		t.Skipf("aws-lambda-go's %s: %v", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// aws-lambda-go's kinesis-event.json: two records of one shard with the
// same data. Keyed by event id (the default) they are two operations; the
// first one's failure reports its sequence number and holds the second.
func TestUpstreamKinesisEvent(t *testing.T) {
	var ev events.KinesisEvent
	upstream(t, "kinesis-event.json", &ev)
	l := newLedger()
	h := newAdapter(t, memstore.New()).Kinesis(l.kinesis)
	l.setFail(ev.Records[0].EventID, errDownstream)
	resp, err := h(t.Context(), ev)
	wantReported(t, resp, err, seqs(ev, 0))
	l.setFail(ev.Records[0].EventID, nil)
	resp, err = h(t.Context(), ev)
	wantReported(t, resp, err, []string{})
	if got := l.ran(ev); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("runs %v, want [2 1]", got)
	}
}

// aws-lambda-go's dynamodb-event.json holds two INSERTs with different
// event ids but the same SequenceNumber, and new images with every
// attribute type (sets, lists, maps, NULL, a Binary "test"). Keyed by event
// id both run; keyed by the new image's "key" attribute (the same in both,
// with different images) the second is the key reused, reported by the
// sequence number it carries.
func TestUpstreamDynamoDBEvent(t *testing.T) {
	// (Its dynamodb-event-malformed.2.json is cut short: the runtime fails
	// to decode it before any handler runs.)
	for _, name := range []string{"dynamodb-event.json"} {
		t.Run(name, func(t *testing.T) {
			var ev events.DynamoDBEvent
			upstream(t, name, &ev)
			for _, tt := range []struct {
				key      streambatch.KeyFunc
				runs     int
				reported []string
			}{
				{nil, 2, []string{}},
				{streambatch.KeyFromNewImage("key"), 1, []string{ev.Records[1].Change.SequenceNumber}},
			} {
				runs := 0
				h := newAdapter(t, memstore.New(), func(o *streambatch.Options) { o.Key = tt.key }).DynamoDB(
					func(context.Context, events.DynamoDBEventRecord) error { runs++; return nil })
				resp, err := h(t.Context(), ev)
				if err != nil {
					t.Fatal(err)
				}
				got := []string{}
				for _, f := range resp.BatchItemFailures {
					got = append(got, f.ItemIdentifier)
				}
				if runs != tt.runs || !slices.Equal(got, tt.reported) {
					t.Fatalf("runs %d, reported %v; want %d, %v", runs, got, tt.runs, tt.reported)
				}
			}
		})
	}
}
