package httpidem

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// Options configure the middleware [New] returns. The zero value of every
// field means its documented default.
type Options struct {
	// Header names the request header that carries the idempotency key,
	// matched case-insensitively. Default "Idempotency-Key".
	Header string

	// RequireKey lists the methods whose requests must carry a key; such a
	// request without one is refused with 400. Requests of other methods
	// without a key pass straight through to the handler, with no store
	// call, their body unread. Requests with a safe method (GET, HEAD,
	// OPTIONS, TRACE) always pass through. Default: POST and PATCH.
	RequireKey []string

	// MaxKeyLength caps the key's length in bytes; a longer key is refused
	// with 400. Default 255. The Guard's own Options.MaxKeySize applies too.
	MaxKeyLength int

	// Scope returns the principal a request acts for: records of different
	// scopes never meet. The middleware adds the method and route to it.
	// Return a [*Problem] to refuse the request with it.
	//
	// Default: the caller the request carries where the middleware can read
	// one: under lambdaurl (a Function URL), the event's IAM caller (none
	// for AuthType NONE, whose requests share one anonymous scope, as in
	// apigw); behind aws-lambda-go-api-proxy, the API Gateway request
	// context that APIGatewayV1 or APIGatewayV2 hands over, read as apigw
	// reads it. A request that carries neither (a container, a local
	// server) is refused with 500, [ProblemUnidentifiedCaller], and one
	// error log line naming this option: set Scope there, for example to
	// [JWTPrincipal] of the token your authentication middleware verified.
	//
	// Scope must not return an empty scope for a request that shows an
	// authorizer or carries no identity the middleware reads, nor for an
	// anonymous one when RefuseAnonymous is set: such a request is refused
	// as by [ProblemUnidentifiedCaller]. To let callers share a scope on
	// purpose, return a non-empty constant.
	Scope func(r *http.Request) (string, error)

	// APIGatewayV1 returns the REST API request context of a request served
	// through aws-lambda-go-api-proxy (pass its
	// core.GetAPIGatewayContextFromContext), so that the middleware scopes
	// keys by its authorizer's caller as apigw does. Default: none.
	APIGatewayV1 func(context.Context) (events.APIGatewayProxyRequestContext, bool)

	// APIGatewayV2 returns the HTTP API request context of a request served
	// through aws-lambda-go-api-proxy (pass its
	// core.GetAPIGatewayV2ContextFromContext): its JWT, Lambda or IAM
	// authorizer's caller scopes the keys, and its route key is the route.
	// Default: none.
	APIGatewayV2 func(context.Context) (events.APIGatewayV2HTTPRequestContext, bool)

	// IdentityClaims and IdentityContextKeys name the JWT claims and Lambda
	// authorizer context values that identify a caller where an API Gateway
	// request context carries no "sub" or principalId, as apigw's options of
	// the same names. Default: none.
	IdentityClaims, IdentityContextKeys []string

	// RefuseAnonymous refuses requests that show no authorizer at all (a
	// Function URL with AuthType NONE), instead of running them in the one
	// scope all anonymous callers share. Default false.
	RefuseAnonymous bool

	// Route returns the route pattern a request matched, such as chi's
	// chi.RouteContext(r.Context()).RoutePattern(); the method is put before
	// it. An empty result means none. Default: the pattern of the ServeMux
	// route that matched (http.Request.Pattern, when the middleware wraps the
	// handler registered there), else the API Gateway route key
	// (APIGatewayV2), else the method and the normalized path, so that
	// "/payments/", "//payments" and "/%70ayments" are one route. Keys are
	// scoped by the route, and a pattern's path parameters are part of the
	// fingerprint; where their values cannot be read (an API Gateway route
	// key, whose request context carries none; a router that sets no path
	// values) the normalized path stands in for them. To share records with
	// apigw on a route with parameters, let the middleware see the ServeMux
	// pattern (wrap the handler you register).
	Route func(r *http.Request) string

	// MaxBodySize caps the body of a keyed request, which the middleware
	// reads whole to fingerprint it before the handler runs; a larger one is
	// refused with 413, [ProblemRequestTooLarge], unread past the cap. The
	// handler gets the same bytes. Default 6 MiB, a Lambda request payload's
	// limit.
	MaxBodySize int64

	// Logger receives one error line for each request refused because its
	// caller could not be identified, naming the fix, and one for each
	// handler panic recovered under lambdaurl; never a claim, a key or a
	// body. Default [slog.Default].
	Logger *slog.Logger

	// Parts chooses which parts of a request define its intent: a duplicate
	// whose parts differ from the first request's is refused with 422.
	// Default [AllParts].
	Parts Parts

	// Decided reports whether a response with this status is a decided
	// outcome of the operation, to store and replay to every duplicate. A
	// response it rejects is written once and not stored, and the claim is
	// released, so that the client may fix the request and reuse the key.
	// Default [DecidedStatus].
	Decided func(status int) bool

	// OnReplay, if set, is called with the headers of every replayed
	// response before it is written, and may change them. The header
	// Idempotent-Replayed: true is already set. It must not keep h. Headers
	// set on the ResponseWriter before the middleware ran (CORS, say, by an
	// outer middleware) are written with a replay too.
	OnReplay func(r *http.Request, h http.Header)

	// ConditionFailed maps a request whose staged writes were refused at
	// commit because a business condition failed (see
	// lambdaidem.ErrConditionFailed) to the problem the client gets.
	// Nothing was written and the claim was released. Return nil for the
	// default. Default: 409, [ProblemConditionFailed].
	ConditionFailed func(r *http.Request, err error) *Problem

	// ReplayHeaders names response headers, besides those stored by default
	// (see [New]), to store and replay. Cookies, authentication headers,
	// hop-by-hop headers and names holding a credential word are never
	// stored, named or not. Default: none.
	ReplayHeaders []string

	// OmitHeaders names response headers not to store even though they are
	// stored by default or ReplayHeaders names them.
	OmitHeaders []string
}

// defaultMaxBody is Options.MaxBodySize's default: a Lambda request
// payload's limit.
const defaultMaxBody = 6 << 20

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

// config maps the options onto the engine's.
func (o *Options) config() httpengine.Config {
	c := httpengine.Config{
		Name:                "httpidem",
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
	if scope := o.Scope; scope != nil {
		c.Scope = func(_ context.Context, r *httpengine.Request) (string, error) { return scope(r.Source.(*http.Request)) }
	}
	return c
}
