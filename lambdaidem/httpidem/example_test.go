package httpidem_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// A container's service: the caller comes from the service's own
// authentication (here a header standing in for a verified token's
// subject); the middleware wraps the handler registered on the ServeMux.
func Example() {
	guard, err := lambdaidem.New(memstore.New()) // dynamostore.New(...) in a real service
	if err != nil {
		fmt.Println(err)
		return
	}
	idem, err := httpidem.New(guard, "CreatePayment", func(o *httpidem.Options) {
		o.Scope = func(r *http.Request) (string, error) {
			return httpidem.JWTPrincipal("https://idp.example.com/", r.Header.Get("X-Verified-Subject")), nil
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	runs := 0
	mux := http.NewServeMux()
	mux.Handle("POST /payments", idem(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"pay_%d"}`, runs)
	})))
	// http.ListenAndServe(":8080", mux) in a real service.

	send := func(body string) {
		r := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(body))
		r.Header.Set("Idempotency-Key", "9b2e6f1c")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-Verified-Subject", "alice")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		b, _ := io.ReadAll(w.Result().Body)
		fmt.Println(w.Code, w.Header().Get("Content-Type"), string(b)[:min(len(b), 16)], "replayed:", w.Header().Get("Idempotent-Replayed") == "true")
	}
	send(`{"amount":1250,"currency":"EUR"}`)
	send(`{"currency":"EUR", "amount":1250}`) // the same request: replayed
	send(`{"amount":9999,"currency":"EUR"}`)  // the same key, another request
	fmt.Println("handler runs:", runs)
	// Output:
	// 201 application/json {"id":"pay_1"} replayed: false
	// 201 application/json {"id":"pay_1"} replayed: true
	// 422 application/problem+json {"type":"https:/ replayed: false
	// handler runs: 1
}
