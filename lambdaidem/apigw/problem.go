package apigw

import "github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"

// The type URIs of the problems the adapter answers with. They are stable:
// clients may branch on them. Each is documented in problems.md beside this
// file, which its URI points to. The net/http middleware (httpidem) answers
// with the same ones.
const (
	// ProblemMissingKey: 400, a request whose method requires an
	// idempotency key carries none.
	ProblemMissingKey = httpengine.ProblemMissingKey
	// ProblemInvalidKey: 400, the key is malformed, too long, or sent twice.
	ProblemInvalidKey = httpengine.ProblemInvalidKey
	// ProblemMalformedRequest: 400, the event cannot be read (a body that is
	// not valid base64 although the event says it is).
	ProblemMalformedRequest = httpengine.ProblemMalformedRequest
	// ProblemKeyReused: 422, the key was used before with a different
	// request. The earlier request's outcome is not revealed.
	ProblemKeyReused = httpengine.ProblemKeyReused
	// ProblemInProgress: 409 with Retry-After, a request with the same key
	// is still being processed.
	ProblemInProgress = httpengine.ProblemInProgress
	// ProblemOutcomeUnknown: 409, an earlier attempt with the same key
	// failed after starting an external effect; its outcome is being
	// reconciled.
	ProblemOutcomeUnknown = httpengine.ProblemOutcomeUnknown
	// ProblemStoreUnavailable: 503 with Retry-After, the idempotency store
	// cannot be reached, and the request was not run (fail closed).
	ProblemStoreUnavailable = httpengine.ProblemStoreUnavailable
	// ProblemResponseTooLarge: 500, the handler's response is larger than
	// the guard's MaxOutcomeSize, so it could not be stored for replay;
	// nothing was committed, and a retry will fail the same way.
	ProblemResponseTooLarge = httpengine.ProblemResponseTooLarge
	// ProblemUnidentifiedCaller: 500, the event shows an authorizer (JWT,
	// Lambda, IAM, Cognito, API key) but names no caller the adapter can
	// scope keys by, or it shows none and [Options.RefuseAnonymous] is set.
	// The deployment is at fault, not the client: the request was not run,
	// and the adapter logged one error line naming the fix.
	ProblemUnidentifiedCaller = httpengine.ProblemUnidentifiedCaller
	// ProblemConditionFailed: 409, a business condition of the request's
	// writes failed when they were committed (the resource it changes does
	// not exist, or is not in the state it needs). Nothing was done or
	// stored; the same request fails the same way. Options.ConditionFailed
	// may answer with another problem (a 404).
	ProblemConditionFailed = httpengine.ProblemConditionFailed
	// ProblemKeyServiceUnavailable: 503 with Retry-After, the request's
	// outcome is stored, sealed, and the key service that opens it
	// (AWS KMS) is throttling or unavailable for now: a retry with the
	// same key replays it. Nothing ran again and nothing was released.
	ProblemKeyServiceUnavailable = httpengine.ProblemKeyServiceUnavailable
	// ProblemKeyRefused: 500, the request's outcome is stored, sealed, and
	// the key service refused its key (access denied, key disabled or
	// deleted). The deployment is at fault; retrying will not help until
	// an operator restores the key or the role's permission, which the
	// guard's error line names. Nothing ran again and nothing was released.
	ProblemKeyRefused = httpengine.ProblemKeyRefused
	// ProblemInternal: 500, anything else went wrong in the adapter or the
	// store.
	ProblemInternal = httpengine.ProblemInternal
)

// Problem is an RFC 9457 problem detail, rendered as
// application/problem+json. An [Options.Scope] function may return one as
// its error to refuse a request with it (say, a 401 for a missing
// principal). Its fields are Type, Title, Status, Detail and RetryAfter
// (sent as the Retry-After header, in whole seconds rounded up).
type Problem = httpengine.Problem
