package ddbtest_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// envStreams names a directory of recorded streams to replay instead of
// testdata/streams (to triage a fresh recording in full).
const envStreams = "LAMBDAIDEM_DIFF_STREAMS"

// TestDifferentialRecordedStreams replays the request streams the suites
// really send (recorded with LAMBDAIDEM_DDB_RECORD while dev/integrationtest,
// the relay, the examples and the command's tests ran; testdata/streams
// holds a bounded selection, see its README) to a fresh embedded world and
// a fresh Dynoxide each: every answer must agree.
func TestDifferentialRecordedStreams(t *testing.T) {
	dir := os.Getenv(envStreams)
	if dir == "" {
		dir = filepath.Join("testdata", "streams")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams in %s (%v)", dir, err)
	}
	if _, err := ddbtest.DynoxideBinary(); err != nil {
		t.Skipf("the second world is skipped: %v", err)
	}
	requests := 0
	for _, f := range files {
		steps := readStream(t, f)
		requests += len(steps)
		t.Run(filepath.Base(f), func(t *testing.T) {
			for _, d := range compare(t, steps, answers(t, embeddedURL(t, ddbtest.Departures{}), steps), answers(t, dynoxideURL(t), steps)) {
				t.Error(d)
			}
		})
	}
	t.Logf("%d streams, %d requests replayed to both worlds", len(files), requests)
}

// readStream reads one recorded stream.
func readStream(t *testing.T, path string) []step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []step
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var s step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return steps
}
