package apigw_test

import (
	"context"
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

// A function deployed without the table's Sealer answers the retry of a
// sealed request with 500 key-refused (the deployment is at fault), never
// 422 key-reused (which tells the client to change its request).
func TestASealedRecordWithoutTheSealerIsNot422(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		store := memstore.New()
		sealer, err := seal.New(sealtest.New())
		if err != nil {
			t.Fatal(err)
		}
		sealed := newAdapter(t, store, func(o *lambdaidem.Options) { o.Sealer = sealer })
		plain := newAdapter(t, store, func(o *lambdaidem.Options) { o.Logger = slog.New(slog.DiscardHandler) },
			func(o *apigw.Options) { o.Logger = slog.New(slog.DiscardHandler) })
		ok := func(context.Context, []byte) (reply, error) {
			return reply{Status: http.StatusCreated, Body: "paid"}, nil
		}
		if r, err := k.send(t, sealed, context.Background(), edit{}, ok); err != nil || r.Status != http.StatusCreated {
			t.Fatalf("sealed first request: %d %v", r.Status, err)
		}
		r, err := k.send(t, plain, context.Background(), edit{}, func(context.Context, []byte) (reply, error) {
			t.Error("ran again")
			return reply{}, nil
		})
		if err != nil || r.Status != http.StatusInternalServerError || !strings.Contains(r.Body, "key-refused") {
			t.Fatalf("retry without the Sealer: %d %q %v; want 500 key-refused", r.Status, r.Body, err)
		}
	})
}
