package payments

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// Routes returns the API's routes, as HTTP API route keys.
func Routes() []string { return []string{"POST /payments", "GET /payments/{id}"} }

// Options configure an [API].
type Options struct {
	// Now is the clock for created_at. Default time.Now.
	Now func() time.Time
	// Idempotency configures the Idempotency-Key adapter; see apigw.Options.
	Idempotency []func(*apigw.Options)
}

// API serves the payments routes. It is safe for concurrent use.
type API struct {
	db     DB
	table  string
	now    func() time.Time
	create func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
}

// New returns the API over the payments table, with POSTs made idempotent
// by guard, whose store must be a dynamostore.Store (the payment is staged
// with dynamostore.Stage). It returns an error if an argument is missing or
// an option is invalid.
func New(guard *lambdaidem.Guard, db DB, table string, optFns ...func(*Options)) (*API, error) {
	if db == nil || table == "" {
		return nil, errors.New("payments: New needs a DB and a table name")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	idem, err := apigw.New(guard, "CreatePayment", o.Idempotency...)
	if err != nil {
		return nil, err
	}
	a := &API{db: db, table: table, now: o.Now}
	a.create = idem.WrapV2(a.createPayment)
	return a, nil
}

// Handle is the Lambda handler: pass it to lambda.Start.
func (a *API) Handle(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	switch e.RouteKey {
	case "POST /payments":
		return a.create(ctx, e)
	case "GET /payments/{id}":
		return a.getPayment(ctx, e)
	}
	return problem(http.StatusNotFound, "not-found", "Not found", "no such route"), nil
}

// createPayment runs once per idempotency key; see the package doc.
func (a *API) createPayment(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return problem(http.StatusBadRequest, "invalid-payment", "Invalid payment", "the body is not valid base64"), nil
		}
		body = b
	}
	p, err := parseNewPayment(body)
	if err != nil {
		// 400: not stored, the key is released; the client may fix the request.
		return problem(http.StatusBadRequest, "invalid-payment", "Invalid payment", err.Error()), nil
	}
	p.ID = newID()
	p.CreatedAt = a.now().UTC().Format(time.RFC3339)
	if err := stagePut(ctx, a.table, p); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err // released; API Gateway answers 500
	}
	resp := jsonResponse(http.StatusCreated, p)
	resp.Headers["Location"] = "/payments/" + p.ID
	return resp, nil
}

func (a *API) getPayment(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	id := e.PathParameters["id"]
	p, found, err := get(ctx, a.db, a.table, id)
	switch {
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, err
	case !found:
		return problem(http.StatusNotFound, "not-found", "Payment not found", "no payment has this id"), nil
	}
	return jsonResponse(http.StatusOK, p), nil
}

func jsonResponse(status int, v any) events.APIGatewayV2HTTPResponse {
	b, _ := json.Marshal(v) // a Payment always encodes
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
}

// problemBase prefixes the type URIs of the API's own problems.
const problemBase = "https://github.com/lambdaidem/lambdaidem/blob/main/examples/api-gateway/README.md#"

func problem(status int, slug, title, detail string) events.APIGatewayV2HTTPResponse {
	b, _ := json.Marshal(map[string]any{"type": problemBase + slug, "title": title, "status": status, "detail": detail})
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/problem+json"}, Body: string(b)}
}
