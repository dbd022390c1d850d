package payments_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"
)

// TestConcurrentDuplicatesMakeOnePayment sends 30 identical POSTs at once
// (released together by a start barrier) over real HTTP, through the
// httpevent translation and the API over DynamoDB. Exactly one payment is
// written; every 2xx carries the same body; every other answer is 409.
func TestConcurrentDuplicatesMakeOnePayment(t *testing.T) {
	const n = 30
	e := setup(t)
	srv := httptest.NewServer(httpevent.Handler(e.translator, e.api.Handle))
	defer srv.Close()

	type result struct {
		status   int
		body     string
		replayed bool
		err      error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.URL+"/payments", bytes.NewReader([]byte(valid)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "race-1")
			req.Header.Set("Authorization", "Bearer alice")
			<-start
			res, err := srv.Client().Do(req)
			if err != nil {
				results[i] = result{err: err}
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			results[i] = result{status: res.StatusCode, body: string(b), replayed: res.Header.Get("Idempotent-Replayed") == "true"}
		}()
	}
	close(start)
	wg.Wait()

	var created, fresh, conflicts int
	var body string
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Fatal(r.err)
		case r.status == 201:
			created++
			if !r.replayed {
				fresh++
			}
			if body == "" {
				body = r.body
			} else if r.body != body {
				t.Errorf("two different 201 bodies:\n%s\n%s", body, r.body)
			}
		case r.status == 409:
			conflicts++
		default:
			t.Errorf("unexpected %d %s", r.status, r.body)
		}
	}
	t.Logf("%d × 201 (%d fresh, the rest replays), %d × 409 in progress", created, fresh, conflicts)
	if fresh != 1 || created+conflicts != n {
		t.Errorf("%d created (%d fresh), %d conflicts of %d; want exactly one fresh 201", created, fresh, conflicts, n)
	}
	if items := e.count(t, e.paymentsTable); items != 1 {
		t.Errorf("%d payment items, want exactly 1", items)
	}
}
