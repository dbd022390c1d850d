package httpidem_test

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// A stored, sealed outcome that a process cannot open because the key
// service fails gets apigw's answers through the middleware too: 503 with
// Retry-After while it is throttled, 500 key-refused when the key is
// refused; the handler does not run again, and once the key service
// answers the retry replays.
func TestSealedOutcomeTheKeyServiceCannotOpen(t *testing.T) {
	cases := []struct {
		name       string
		fail       error
		status     int
		typ        string
		retryAfter bool
	}{
		{"throttled", sealtest.Throttled("kms:Decrypt"), http.StatusServiceUnavailable, httpidem.ProblemKeyServiceUnavailable, true},
		{"access denied", sealtest.Denied("kms:Decrypt"), http.StatusInternalServerError, httpidem.ProblemKeyRefused, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := sealtest.New()
			store := memstore.New()
			var runs atomic.Int32
			process := func() http.Handler { // a process of its own: a cold Sealer
				sealer, err := seal.New(keys)
				if err != nil {
					t.Fatal(err)
				}
				return newMiddleware(t, store, func(o *lambdaidem.Options) { o.Sealer = sealer })(counting(&runs))
			}
			if rec := serve(process(), post(`{}`)); rec.Code != http.StatusCreated {
				t.Fatalf("first request: %d %s", rec.Code, rec.Body.String())
			}
			keys.Fail(sealtest.Decrypt, c.fail)
			cold := process()
			rec := serve(cold, post(`{}`))
			var p httpidem.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != c.status || p.Type != c.typ {
				t.Fatalf("retry while the key service fails: %d %s; want %d %s", rec.Code, rec.Body.String(), c.status, c.typ)
			}
			if got := rec.Header().Get("Retry-After") != ""; got != c.retryAfter {
				t.Errorf("Retry-After %q; want one: %v", rec.Header().Get("Retry-After"), c.retryAfter)
			}
			keys.Fail(sealtest.Decrypt, nil)
			rec = serve(cold, post(`{}`))
			if rec.Code != http.StatusCreated || rec.Header().Get("Idempotent-Replayed") != "true" || runs.Load() != 1 {
				t.Fatalf("retry once the key service answers: %d %v after %d runs; want the replay", rec.Code, rec.Header(), runs.Load())
			}
		})
	}
}
