package payments

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
)

// HandlerOptions configure [NewHandler].
type HandlerOptions struct {
	// Now is the clock for created_at. Default time.Now.
	Now func() time.Time
	// Idempotency configures the Idempotency-Key middleware; see
	// httpidem.Options. In a container, set its Scope.
	Idempotency []func(*httpidem.Options)
}

// NewHandler returns the same API as an http.Handler (a go-chi router),
// for lambdaurl (a Function URL) or a plain server: POST /payments made
// idempotent by the httpidem middleware under the operation name the
// HTTP API's adapter uses, so that both serve one idempotency table, and
// GET /payments/{id}. It returns an error if an argument is missing or an
// option is invalid.
func NewHandler(guard *lambdaidem.Guard, db DB, table string, optFns ...func(*HandlerOptions)) (http.Handler, error) {
	if db == nil || table == "" {
		return nil, errors.New("payments: NewHandler needs a DB and a table name")
	}
	var o HandlerOptions
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	idem, err := httpidem.New(guard, "CreatePayment", o.Idempotency...)
	if err != nil {
		return nil, err
	}
	a := &API{db: db, table: table, now: o.Now}
	r := chi.NewRouter()
	// Inline, so that the middleware runs once chi has matched the route:
	// the route pattern ("POST /payments") scopes the keys, as the HTTP
	// API's route key does.
	r.With(idem).Post("/payments", a.createPaymentHTTP)
	r.Get("/payments/{id}", a.getPaymentHTTP)
	return r, nil
}

// createPaymentHTTP runs once per idempotency key, as createPayment.
func (a *API) createPaymentHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "invalid-payment", "Invalid payment", "the body could not be read")
		return
	}
	p, err := parseNewPayment(body)
	if err != nil {
		// 400: not stored, the key is released; the client may fix the request.
		writeProblem(w, http.StatusBadRequest, "invalid-payment", "Invalid payment", err.Error())
		return
	}
	p.ID = newID()
	p.CreatedAt = a.now().UTC().Format(time.RFC3339)
	if err := stagePut(r.Context(), a.table, p); err != nil {
		// 500: not stored, released; a retry runs again.
		writeProblem(w, http.StatusInternalServerError, "internal", "Internal error", "the payment could not be staged")
		return
	}
	w.Header().Set("Location", "/payments/"+p.ID)
	writeJSON(w, http.StatusCreated, p)
}

func (a *API) getPaymentHTTP(w http.ResponseWriter, r *http.Request) {
	p, found, err := get(r.Context(), a.db, a.table, chi.URLParam(r, "id"))
	switch {
	case err != nil:
		writeProblem(w, http.StatusInternalServerError, "internal", "Internal error", "the payment could not be read")
	case !found:
		writeProblem(w, http.StatusNotFound, "not-found", "Payment not found", "no payment has this id")
	default:
		writeJSON(w, http.StatusOK, p)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	resp := jsonResponse(status, v)
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.WriteString(w, resp.Body)
}

func writeProblem(w http.ResponseWriter, status int, slug, title, detail string) {
	resp := problem(status, slug, title, detail)
	w.Header().Set("Content-Type", resp.Headers["Content-Type"])
	w.WriteHeader(status)
	_, _ = io.WriteString(w, resp.Body)
}
