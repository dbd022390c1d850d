package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// A stored, sealed outcome that a process cannot open because the key
// service fails is not "nothing was stored": throttling answers 503 with
// Retry-After and a problem saying a retry replays it; a refused key
// answers key-refused without Retry-After, with one Error line naming the
// key and the IAM action. Neither runs the handler again nor releases the
// record: once the key service answers, the retry replays.
func TestSealedOutcomeTheKeyServiceCannotOpen(t *testing.T) {
	cases := []struct {
		name       string
		fail       error
		status     int
		typ        string
		retryAfter bool
		logLevel   string
	}{
		{"throttled", sealtest.Throttled("kms:Decrypt"), http.StatusServiceUnavailable, apigw.ProblemKeyServiceUnavailable, true, "WARN"},
		{"access denied", sealtest.Denied("kms:Decrypt"), http.StatusInternalServerError, apigw.ProblemKeyRefused, false, "ERROR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := sealtest.New()
			store := memstore.New()
			var logs bytes.Buffer
			adapter := func() *apigw.Adapter { // a process of its own: a cold Sealer
				sealer, err := seal.New(keys)
				if err != nil {
					t.Fatal(err)
				}
				return newAdapter(t, store, func(o *lambdaidem.Options) {
					o.Sealer = sealer
					o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				})
			}
			h := &counter{}
			if r, err := sendV2(t, adapter(), context.Background(), edit{}, h.handle); err != nil || r.Status != http.StatusCreated {
				t.Fatalf("first request: %d %v", r.Status, err)
			}
			keys.Fail(sealtest.Decrypt, c.fail)
			cold := adapter()
			r, err := sendV2(t, cold, context.Background(), edit{}, h.handle)
			if err != nil || r.Status != c.status {
				t.Fatalf("retry while the key service fails: %d %s %v; want %d", r.Status, r.Body, err, c.status)
			}
			var p apigw.Problem
			if err := json.Unmarshal([]byte(r.Body), &p); err != nil || p.Type != c.typ {
				t.Fatalf("problem %s (%v); want type %s", r.Body, err, c.typ)
			}
			if got := r.Header.Get("Retry-After") != ""; got != c.retryAfter {
				t.Errorf("Retry-After %q; want one: %v", r.Header.Get("Retry-After"), c.retryAfter)
			}
			if strings.Contains(p.Detail, "nothing was stored") || !strings.Contains(p.Detail, "stored") {
				t.Errorf("detail %q; it must say the outcome is stored", p.Detail)
			}
			line := ""
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "cannot be opened") {
					line = l
				}
			}
			if !strings.Contains(line, "level="+c.logLevel) || !strings.Contains(line, "kms_key="+sealtest.KeyID) || !strings.Contains(line, "action=kms:Decrypt") {
				t.Errorf("log line %q; want level %s naming the key and kms:Decrypt", line, c.logLevel)
			}
			if n := h.runs.Load(); n != 1 {
				t.Fatalf("handler ran %d times; want 1", n)
			}
			keys.Fail(sealtest.Decrypt, nil)
			r, err = sendV2(t, cold, context.Background(), edit{}, h.handle)
			if err != nil || r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || h.runs.Load() != 1 {
				t.Fatalf("retry once the key service answers: %d %v %v, %d runs; want the replay", r.Status, r.Header, err, h.runs.Load())
			}
		})
	}
}
