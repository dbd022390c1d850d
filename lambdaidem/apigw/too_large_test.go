package apigw_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// A response too large to store is refused with its own problem type,
// nothing is kept, and the key is released. The cap applies to the stored
// bytes, after compression: the body is random base64, which gzip cannot
// shrink under the cap.
func TestResponseTooLargeToStore(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		store := memstore.New()
		a := newAdapter(t, store, func(o *lambdaidem.Options) { o.MaxOutcomeSize = 1024 })
		big := &counter{reply: reply{Status: http.StatusCreated, Body: incompressible(4096)}}
		r, err := k.send(t, a, context.Background(), edit{}, big.handle)
		if err != nil {
			t.Fatal(err)
		}
		problemOf(t, r, http.StatusInternalServerError, apigw.ProblemResponseTooLarge)
		if recs := store.Records(); len(recs) != 0 {
			t.Fatalf("records after a too-large response: %d; want none", len(recs))
		}
		small := &counter{}
		if r, _ := k.send(t, a, context.Background(), edit{}, small.handle); r.Status != http.StatusCreated || small.runs.Load() != 1 {
			t.Fatalf("retry after a too-large response = %d after %d runs; want the handler to run again", r.Status, small.runs.Load())
		}
	})
}

// incompressible is n bytes of base64 text from a random source.
func incompressible(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}
