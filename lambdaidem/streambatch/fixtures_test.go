package streambatch_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The fixtures are shaped like the events Lambda delivers (the shapes of
// aws-lambda-go's events/testdata and of the AWS Lambda Developer Guide's
// sample events): decoding and re-encoding them with aws-lambda-go's
// types loses nothing.
func TestFixturesRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name string
		ev   any
	}{
		{"kinesis.json", &events.KinesisEvent{}},
		{"dynamodb.json", &events.DynamoDBEvent{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tt.name))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(in, tt.ev); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(tt.ev)
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
		})
	}
}
