package sqsbatch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The fixtures are shaped like the events Lambda delivers: decoding and
// re-encoding them with aws-lambda-go's types loses nothing.
func TestFixturesRoundTrip(t *testing.T) {
	for _, name := range []string{"standard.json", "fifo.json"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			var ev events.SQSEvent
			if err := json.Unmarshal(in, &ev); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("round trip changed the event:\nin:  %s\nout: %s", in, out)
			}
			if len(ev.Records) == 0 {
				t.Error("fixture has no records")
			}
		})
	}
}

// A response lists failures under the key Lambda reads, and an empty list
// (not null) when every message succeeded.
func TestResponseShape(t *testing.T) {
	s := newSetup(t, newOrders().handle, nil)
	resp := s.invoke(t, records(loadEvent(t, "standard.json"), 0))
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"batchItemFailures":[]}`; got != want {
		t.Errorf("response = %s, want %s", got, want)
	}
}
