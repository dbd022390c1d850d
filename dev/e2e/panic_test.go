//go:build e2e

package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/dev/e2estack"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// TestFunctionURLPanic runs dev/e2e/panicurl under the Runtime Interface
// Emulator. lambdaurl.Wrap runs an http.Handler in a goroutine without a
// recover: a panic there ends the process (the emulator reports the
// runtime's exit and starts a new one, losing whatever the process held).
// Behind the httpidem middleware the panic is recovered: the invocation
// answers 500 problem+json, the claim is released, the process lives on,
// and the retry runs the handler again.
func TestFunctionURLPanic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the function runs as a Linux bootstrap under the Runtime Interface Emulator; this is " + runtime.GOOS)
	}
	ctx := t.Context()
	rieBin, err := rie.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./dev/e2e/panicurl", Out: filepath.Join(work, "panicurl")})
	if err != nil {
		t.Fatal(err)
	}
	log := newLogFile(t, filepath.Join(work, "function.log"))
	fn, err := rie.Start(ctx, rie.Options{RIE: rieBin, Bootstrap: bin, Name: "panicurl", Timeout: 5 * time.Second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fn.Close)
	invoke := func(t *testing.T, path string) (e2estack.StreamedResponse, rie.Invocation) {
		t.Helper()
		e := e2estack.FunctionURLRequest("POST", path, "", map[string]string{"Idempotency-Key": "k-1", "Content-Type": "application/json"}, `{}`, "arn:aws:iam::123456789012:user/alice")
		payload, _ := json.Marshal(e)
		inv, err := fn.Invoke(t.Context(), payload)
		if err != nil {
			t.Fatal(err)
		}
		if inv.FunctionError != "" {
			return e2estack.StreamedResponse{}, inv
		}
		resp, err := e2estack.ReadStreamedResponse(inv.Payload)
		if err != nil {
			t.Fatalf("%v: %q", err, inv.Payload)
		}
		return resp, inv
	}

	first, inv := invoke(t, "/guarded")
	if first.Status != http.StatusInternalServerError || first.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("guarded panic: want 500 problem+json from a live process, got %+v (%+v)", first, inv)
	}
	retry, inv := invoke(t, "/guarded")
	if retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "" || retry.Header.Get("X-Invocation") != "2" {
		t.Fatalf("retry: want 201, run again, in the same process (invocation 2); got %+v (%+v)", retry, inv)
	}
	if _, inv := invoke(t, "/bare"); inv.FunctionError == "" {
		t.Fatalf("a bare panic under lambdaurl: want the runtime to fail, got %+v", inv)
	} else {
		t.Logf("a bare panic under lambdaurl: %s", inv.FunctionError)
	}
	after, inv := invoke(t, "/guarded")
	if after.Status == 0 || after.Header.Get("X-Invocation") != "1" {
		t.Fatalf("after the bare panic: want a new process (invocation 1), got %+v (%+v)", after, inv)
	}
}
