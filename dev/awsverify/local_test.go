package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalModeRunsTheChecks runs the command's LOCAL mode, the same code
// as on AWS but against the in-process endpoint, with every check but the
// flows (`make aws-verify-local` runs those too: they start the embedded
// stack under the Runtime Interface Emulator, as `make e2e` does), and
// reads the report back.
func TestLocalModeRunsTheChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite, contention, chaos and the probes: about a minute")
	}
	out := t.TempDir()
	t.Chdir("..")
	var stdout, stderr bytes.Buffer
	code := cli(t.Context(), []string{"-local", "-out", out, "-chaos-ops", "300", "-checks", "conformance,contention,chaos,behaviours,shapes,cost"},
		strings.NewReader(""), &stdout, &stderr, nil)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*-local-v*.md"))
	if len(files) != 1 {
		t.Fatalf("reports: %v; want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	for _, want := range []string{"| target | LOCAL", "| commit | ", "go1.", "github.com/aws/aws-sdk-go-v2/service/dynamodb v",
		"| [conformance](#conformance) | passed", "| [contention](#contention) | passed", "| [chaos](#chaos) | passed",
		"| [behaviours](#behaviours) | passed", "| [shapes](#shapes) | passed", "| [cost](#cost) | passed",
		"token T resent identically after its cancellation, condition now passing", "TransactWriteItems, failed Put, ALL_OLD",
		"64 KB · lambdaidem optimistic · first request", "linearizable true", "| teardown | done |"} {
		if !strings.Contains(rep, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", rep)
	}
}
