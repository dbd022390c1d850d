package apigw

import (
	"context"
	"errors"
	"net/http"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// Adapter makes API Gateway and Function URL handlers idempotent with the
// semantics of the IETF Idempotency-Key draft and Stripe's practice. It is
// safe for concurrent use; build one at start-up per operation.
//
// For a request that carries a key (or must), the adapter:
//
//   - refuses a missing key (on POST and PATCH, by default) or a malformed
//     one with 400;
//   - scopes the key by the authenticated principal, the method and the
//     route, so two callers using the same key never meet; an event that
//     shows an authorizer but names no caller is refused with 500 and one
//     error log line, never run in a shared scope (see
//     [ProblemUnidentifiedCaller]);
//   - fingerprints the method, route, path parameters, query and body, and
//     refuses a duplicate whose fingerprint differs with 422, without
//     revealing the stored response;
//   - answers a duplicate that arrives while the first is running with 409
//     and Retry-After (or waits, if the Guard's InFlight option says so), and
//     one whose earlier attempt ended in an unknown state with 409;
//   - runs the handler once and stores its response if [Options.Decided]
//     accepts its status; every duplicate then gets the stored status,
//     headers and body, plus "Idempotent-Replayed: true";
//   - returns any other response once without storing it and releases the
//     key, so the request may be retried or fixed; a handler error passes
//     through unchanged, and the key is released too;
//   - answers 503 when the store is unavailable, unless the Guard's FailOpen
//     option runs the handler anyway.
//
// A replay carries the stored representation, not the first request's
// session: only these response headers are stored, by an allow-list,
// Content-Type, Content-Encoding, Content-Language, Content-Disposition,
// Location and Content-Location (each only without user info or a query,
// which a presigned URL would carry its credential in), Cache-Control,
// Expires, ETag, Last-Modified and Vary, plus those named in
// [Options.ReplayHeaders], minus those in [Options.OmitHeaders]. CORS
// headers, Date, request and trace ids, authentication challenges and
// anything unlisted are not stored; nor, even when named, cookies (nor the
// cookies field of v2 and Function URL responses), Authorization,
// WWW-Authenticate and the other authentication headers, hop-by-hop
// headers, Content-Length, or a header whose name contains "token",
// "secret", "password", "api-key", "apikey", "access-key", "accesskey",
// "credential", "session", "signature" or "auth". The first response goes to the client as the handler
// returned it.
//
// Refusals are RFC 9457 application/problem+json responses with the type
// URIs listed as the Problem constants. Requests with a safe method (GET,
// HEAD, OPTIONS, TRACE), and requests of other methods not listed in
// [Options.RequireKey] that carry no key, go straight to the handler.
type Adapter struct {
	engine *httpengine.Engine
	// onReplay and conditionFailed are Options.OnReplay and
	// Options.ConditionFailed, applied to what the engine returns.
	onReplay        func(ctx context.Context, r *Request, h http.Header)
	conditionFailed func(ctx context.Context, r *Request, err error) *Problem
}

// New returns an Adapter that guards operation (say "CreatePayment") with
// g. It returns an error if g is nil, operation is empty, or an option is
// invalid.
func New(g *lambdaidem.Guard, operation string, optFns ...func(*Options)) (*Adapter, error) {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	e, err := httpengine.New(g, operation, o.config())
	if err != nil {
		return nil, err
	}
	return &Adapter{engine: e, onReplay: o.OnReplay, conditionFailed: o.ConditionFailed}, nil
}

// errNilHandler is what a handler wrapped from nil returns.
var errNilHandler = errors.New("apigw: nil handler")
