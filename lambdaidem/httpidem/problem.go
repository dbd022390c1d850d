package httpidem

import "github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"

// The type URIs of the problems the middleware answers with: the same as
// apigw's (documented in lambdaidem/apigw/problems.md, which each URI
// points to), so that a client sees one set of problems whichever front
// door serves it.
const (
	ProblemMissingKey         = httpengine.ProblemMissingKey         // 400: a method that requires a key, no key
	ProblemInvalidKey         = httpengine.ProblemInvalidKey         // 400: a malformed, too long or repeated key
	ProblemMalformedRequest   = httpengine.ProblemMalformedRequest   // 400: a body that could not be read
	ProblemRequestTooLarge    = httpengine.ProblemRequestTooLarge    // 413: a keyed body above Options.MaxBodySize
	ProblemKeyReused          = httpengine.ProblemKeyReused          // 422: the key was used with another request
	ProblemInProgress         = httpengine.ProblemInProgress         // 409 + Retry-After: the first request still runs
	ProblemOutcomeUnknown     = httpengine.ProblemOutcomeUnknown     // 409: an earlier attempt's outcome is being reconciled
	ProblemStoreUnavailable   = httpengine.ProblemStoreUnavailable   // 503 + Retry-After: the store cannot be reached
	ProblemResponseTooLarge   = httpengine.ProblemResponseTooLarge   // 500: the response is larger than the outcome cap
	ProblemUnidentifiedCaller = httpengine.ProblemUnidentifiedCaller // 500: no caller identity to scope keys by
	// 503 + Retry-After: the outcome is stored, sealed, and the key service is unavailable; a retry replays it
	ProblemKeyServiceUnavailable = httpengine.ProblemKeyServiceUnavailable
	ProblemKeyRefused            = httpengine.ProblemKeyRefused      // 500: the outcome is stored, sealed, and its key is refused
	ProblemConditionFailed       = httpengine.ProblemConditionFailed // 409: a staged write's business condition failed
	ProblemInternal              = httpengine.ProblemInternal        // 500: anything else; nothing stored
)

// Problem is an RFC 9457 problem detail, rendered as
// application/problem+json; the same type as apigw.Problem. An
// [Options.Scope] function may return one as its error to refuse a request
// with it.
type Problem = httpengine.Problem

// DecidedStatus is the default [Options.Decided] predicate, apigw's: every
// 2xx and 3xx, and 402, 409 and 410, are decided outcomes, stored and
// replayed; every other status is written once and not stored (see
// apigw.DecidedStatus).
func DecidedStatus(status int) bool { return httpengine.DecidedStatus(status) }

// JWTPrincipal is the scope of a verified JSON Web Token's issuer ("iss")
// and subject ("sub"): the principal apigw reads from an HTTP API JWT
// authorizer's event. A service that verifies the same tokens itself (in a
// container, say) and returns JWTPrincipal from [Options.Scope] shares
// records with a Lambda function behind that authorizer: a retry served by
// either replays the other's outcome, given the same operation, route and
// table. An empty subject gives an empty scope, which is refused.
func JWTPrincipal(issuer, subject string) string { return httpengine.JWTPrincipal(issuer, subject) }
