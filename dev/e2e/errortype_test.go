//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/dev/e2estack"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// TestReplayedErrorKeepsItsErrorType: under the Runtime Interface
// Emulator, a duplicate of an invocation that failed with a terminal error
// gets the same errorType and errorMessage (what Step Functions retry rules
// and callers match on), without the handler running again.
func TestReplayedErrorKeepsItsErrorType(t *testing.T) {
	ctx := t.Context()
	rieBin, err := rie.Find(ctx)
	if err != nil {
		t.Skip(err)
	}
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./dev/e2e/declined", Out: filepath.Join(t.TempDir(), "declined")})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var logMu sync.Mutex
	fn, err := rie.Start(ctx, rie.Options{RIE: rieBin, Bootstrap: bin, Name: "declined", Timeout: 10 * time.Second, Log: lockedWriter{&logMu, &log}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close() })

	type lambdaError struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	invoke := func(payload string) (rie.Invocation, lambdaError) {
		t.Helper()
		inv, err := fn.Invoke(ctx, []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		var le lambdaError
		if inv.FunctionError != "" {
			if err := json.Unmarshal(inv.Payload, &le); err != nil {
				t.Fatalf("error payload %s: %v", inv.Payload, err)
			}
		}
		return inv, le
	}
	first, firstErr := invoke(`{"key":"k-1","amount":-5}`)
	replay, replayErr := invoke(`{"key":"k-1","amount":-5}`)
	if first.FunctionError != "CardDeclinedError" || firstErr.Message != "card declined for amount -5" {
		t.Fatalf("first: %s %s; want errorType CardDeclinedError", first.FunctionError, first.Payload)
	}
	if replay.FunctionError != first.FunctionError || replayErr != firstErr {
		t.Fatalf("replay: %s %s; want the first error again: %s %s", replay.FunctionError, replay.Payload, first.FunctionError, first.Payload)
	}
	logMu.Lock()
	output := log.String()
	logMu.Unlock()
	if runs := strings.Count(output, "declined: run"); runs != 1 {
		t.Fatalf("the handler ran %d times; want 1\n%s", runs, output)
	}
	ok, _ := invoke(`{"key":"k-2","amount":3}`)
	again, _ := invoke(`{"key":"k-2","amount":3}`)
	if ok.FunctionError != "" || string(bytes.TrimSpace(ok.Payload)) != `{"charged":3}` || !bytes.Equal(ok.Payload, again.Payload) {
		t.Fatalf("success: %s then %s; want {\"charged\":3} twice", ok.Payload, again.Payload)
	}
}
