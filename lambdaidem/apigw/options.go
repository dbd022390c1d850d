package apigw

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// Options configure an [Adapter]. The zero value of every field means its
// documented default.
type Options struct {
	// Header names the request header that carries the idempotency key,
	// matched case-insensitively. Default "Idempotency-Key". It is not
	// read when Key is set.
	Header string

	// Key returns a request's idempotency key, whether the request carries
	// one at all, and an error if it is malformed (the request is then
	// refused with 400, [ProblemInvalidKey]). Use [KeyFromBodyField] for a
	// key in the JSON body (Square's idempotency_key). Default: the Header,
	// with the rules of the IETF draft (see problems.md, invalid-key).
	Key KeyFunc

	// Fingerprint returns the part of a request that defines its intent,
	// hashed with lambdaidem.Fingerprint: a duplicate whose part differs is
	// refused with 422. Use [FingerprintBodyFields] for chosen fields of a
	// JSON body (leaving out a timestamp or a trace id the client sets
	// anew on each retry). Return a [*Problem] to refuse a request with it.
	// Default: the Parts.
	Fingerprint func(context.Context, *Request) (any, error)

	// RequireKey lists the methods whose requests must carry a key; such a
	// request without one is refused with 400. Requests of other methods
	// without a key pass straight through to the handler, with no store call.
	// Default: POST and PATCH.
	RequireKey []string

	// MaxKeyLength caps the key's length in bytes; a longer key is refused
	// with 400. Default 255. The Guard's own Options.MaxKeySize applies too.
	MaxKeyLength int

	// Scope returns the principal a request acts for. Records of different
	// scopes never meet. The adapter adds the method and route to it.
	// Default: Request.Principal, the authenticated caller the event names
	// (see [Request]). Return a [*Problem] to refuse the request with it.
	//
	// Scope is the escape hatch for deployments whose callers the event
	// does not name. It must not return an empty scope for an event that
	// shows an authorizer (Request.Authorizer), nor for an anonymous one
	// when RefuseAnonymous is set: such a request is refused as by
	// [ProblemUnidentifiedCaller]. To let callers share a scope on purpose,
	// return a non-empty constant.
	Scope func(context.Context, *Request) (string, error)

	// IdentityClaims names the JWT claims that identify a caller whose
	// token carries no "sub" (HTTP API JWT authorizers, REST Cognito user
	// pool authorizers), tried in order: "email", "username", "client_id", …
	// Name only claims that are unique per caller and that the issuer
	// controls. Default: none; a token without "sub" is refused.
	IdentityClaims []string

	// IdentityContextKeys names the values of a Lambda authorizer's context
	// that identify a caller, tried in order after its principalId (REST)
	// and a "sub" value: "userId", "tenantId", … A value must be a string,
	// or an integer up to 2^53. A hash of the whole context is never taken
	// for a caller: a coarse context such as {"plan": "pro"} is the same for
	// many callers. Default: none; a context without principalId or sub is
	// refused.
	IdentityContextKeys []string

	// RefuseAnonymous refuses events that show no authorizer at all (see
	// [ProblemUnidentifiedCaller]), instead of running them in the one scope
	// all anonymous callers share. Set it on every route that sits behind an
	// authorizer whose events may carry no trace of it (an HTTP API Lambda
	// authorizer's simple response without a context). Default false:
	// anonymous requests share one scope.
	RefuseAnonymous bool

	// Logger receives one error line for each request refused because its
	// caller could not be identified, naming the authorizer kind and the
	// fix, and one for each handler error (the handler's error, which
	// goes on to the Lambda runtime); never a claim, a key or a body.
	// Default [slog.Default].
	Logger *slog.Logger

	// Parts chooses which parts of a request define its intent: a duplicate
	// whose parts differ from the first request's is refused with 422.
	// Default [AllParts].
	Parts Parts

	// Decided reports whether a response with this status is a decided
	// outcome of the operation, to store and replay to every duplicate. A
	// response it rejects is returned once and not stored, and the claim is
	// released, so that the client may fix the request and reuse the key.
	// Default [DecidedStatus].
	Decided func(status int) bool

	// OnReplay, if set, is called with the headers of every replayed
	// response before it is returned, and may change them (add a trace id,
	// a Cache-Control, …). The header Idempotent-Replayed: true is already
	// set. It must not keep h.
	OnReplay func(ctx context.Context, r *Request, h http.Header)

	// ConditionFailed maps a request whose staged writes were refused at
	// commit because a business condition failed (the payment to refund
	// does not exist; see lambdaidem.ErrConditionFailed) to the problem the
	// client gets. err is the Guard's error: errors.As reaches the store's
	// error naming the write (a *dynamostore.ConditionFailedError). Nothing
	// was written and the claim was released, so nothing is stored either.
	// Return nil for the default. Default: 409, [ProblemConditionFailed].
	ConditionFailed func(ctx context.Context, r *Request, err error) *Problem

	// ReplayHeaders names response headers, besides those the adapter
	// stores by default (the representation's: see [Adapter]), to store and
	// replay, such as "Link" or "X-Payment-Status". Name only headers that
	// describe the outcome, the same for every client. Cookies,
	// authentication headers, hop-by-hop headers and names holding a
	// credential word are never stored, named or not. Default: none.
	ReplayHeaders []string

	// OmitHeaders names response headers not to store even though the
	// adapter stores them by default or ReplayHeaders names them.
	OmitHeaders []string
}

// Parts is a set of request parts that make up a fingerprint.
type Parts = httpengine.Parts

// The request parts a fingerprint can cover.
const (
	PartMethod         = httpengine.PartMethod
	PartRoute          = httpengine.PartRoute
	PartPathParameters = httpengine.PartPathParameters
	PartQuery          = httpengine.PartQuery
	PartBody           = httpengine.PartBody

	// AllParts is every part: method, route, path parameters, query and body.
	AllParts = httpengine.AllParts
)

// config maps the options onto the engine's; the engine validates them and
// fills in the defaults documented here.
func (o *Options) config() httpengine.Config {
	c := httpengine.Config{
		Name:                "apigw",
		Header:              o.Header,
		RequireKey:          o.RequireKey,
		MaxKeyLength:        o.MaxKeyLength,
		IdentityClaims:      o.IdentityClaims,
		IdentityContextKeys: o.IdentityContextKeys,
		RefuseAnonymous:     o.RefuseAnonymous,
		Logger:              o.Logger,
		Parts:               o.Parts,
		Decided:             o.Decided,
		ReplayHeaders:       o.ReplayHeaders,
		OmitHeaders:         o.OmitHeaders,
	}
	if key := o.Key; key != nil {
		c.Key = func(ctx context.Context, r *httpengine.Request) (string, bool, error) { return key(ctx, view(r)) }
	}
	if scope := o.Scope; scope != nil {
		c.Scope = func(ctx context.Context, r *httpengine.Request) (string, error) { return scope(ctx, view(r)) }
	}
	if fp := o.Fingerprint; fp != nil {
		c.Fingerprint = func(ctx context.Context, r *httpengine.Request) (any, error) { return fp(ctx, view(r)) }
	}
	return c
}
