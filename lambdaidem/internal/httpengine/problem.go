package httpengine

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The type URIs of the problems the adapter answers with. They are stable:
// clients may branch on them. Each is documented in problems.md beside this
// file, which its URI points to.
const (
	problemBase = "https://github.com/lambdaidem/lambdaidem/blob/main/lambdaidem/apigw/problems.md#"

	// ProblemMissingKey: 400, a request whose method requires an
	// idempotency key carries none.
	ProblemMissingKey = problemBase + "missing-key"
	// ProblemInvalidKey: 400, the key is malformed, too long, or sent twice.
	ProblemInvalidKey = problemBase + "invalid-key"
	// ProblemMalformedRequest: 400, the event cannot be read (a body that is
	// not valid base64 although the event says it is).
	ProblemMalformedRequest = problemBase + "malformed-request"
	// ProblemKeyReused: 422, the key was used before with a different
	// request. The earlier request's outcome is not revealed.
	ProblemKeyReused = problemBase + "key-reused"
	// ProblemInProgress: 409 with Retry-After, a request with the same key
	// is still being processed.
	ProblemInProgress = problemBase + "in-progress"
	// ProblemOutcomeUnknown: 409, an earlier attempt with the same key
	// failed after starting an external effect; its outcome is being
	// reconciled.
	ProblemOutcomeUnknown = problemBase + "outcome-unknown"
	// ProblemStoreUnavailable: 503 with Retry-After, the idempotency store
	// cannot be reached, and the request was not run (fail closed).
	ProblemStoreUnavailable = problemBase + "store-unavailable"
	// ProblemResponseTooLarge: 500, the handler's response is larger than
	// the guard's MaxOutcomeSize, so it could not be stored for replay;
	// nothing was committed, and a retry will fail the same way.
	ProblemResponseTooLarge = problemBase + "response-too-large"
	// ProblemUnidentifiedCaller: 500, the event shows an authorizer (JWT,
	// Lambda, IAM, Cognito, API key) but names no caller the adapter can
	// scope keys by, or it shows none and the front door refuses anonymous
	// requests (Options.RefuseAnonymous), or a net/http request carries no
	// identity the middleware can read and no Options.Scope is set, or the
	// function declares tenants (lambdaidem.TenantsEnv) and the invocation
	// names none.
	// The deployment is at fault, not the client: the request was not run,
	// and the adapter logged one error line naming the fix.
	ProblemUnidentifiedCaller = problemBase + "unidentified-caller"
	// ProblemConditionFailed: 409, a business condition of the request's
	// writes failed when they were committed (the resource it changes does
	// not exist, or is not in the state it needs). Nothing was done or
	// stored; the same request fails the same way. Options.ConditionFailed
	// may answer with another problem (a 404).
	ProblemConditionFailed = problemBase + "condition-failed"
	// ProblemKeyServiceUnavailable: 503 with Retry-After, the request's
	// outcome is stored, sealed, and the key service that opens it
	// (AWS KMS) is throttling or unavailable for now: a retry with the
	// same key replays it. Nothing ran again and nothing was released.
	ProblemKeyServiceUnavailable = problemBase + "key-service-unavailable"
	// ProblemKeyRefused: 500, the request's outcome is stored, sealed, and
	// the key service refused its key (access denied, key disabled or
	// deleted). The deployment is at fault; retrying will not help until
	// an operator restores the key or the role's permission, which the
	// guard's error line names. Nothing ran again and nothing was released.
	ProblemKeyRefused = problemBase + "key-refused"
	// ProblemRequestTooLarge: 413, a keyed request's body is larger than
	// the net/http middleware reads to fingerprint it (httpidem's
	// Options.MaxBodySize). The request was not run.
	ProblemRequestTooLarge = problemBase + "request-too-large"
	// ProblemInternal: 500, anything else went wrong in the adapter or the
	// store.
	ProblemInternal = problemBase + "internal"
)

// Problem is an RFC 9457 problem detail, rendered as
// application/problem+json. A front door's Options.Scope function may return one as
// its error to refuse a request with it (say, a 401 for a missing
// principal).
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// RetryAfter, if positive, is sent as the Retry-After header, in whole
	// seconds rounded up.
	RetryAfter time.Duration `json:"-"`
}

func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

// Response renders p.
func (p *Problem) Response() Response {
	body, err := json.Marshal(p)
	if err != nil { // a Problem always encodes; keep a body anyway
		body = []byte(`{"type":"about:blank","status":500}`)
	}
	h := http.Header{"Content-Type": {"application/problem+json"}}
	if p.RetryAfter > 0 {
		secs := int64((p.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	return Response{Status: p.Status, Header: h, Body: string(body)}
}

// NewProblem returns the problem of a status, a type URI (a Problem
// constant), a title and a detail.
func NewProblem(status int, typ, title, detail string) *Problem {
	return problem(status, typ, title, detail)
}

func problem(status int, typ, title, detail string) *Problem {
	return &Problem{Type: typ, Title: title, Status: status, Detail: detail}
}
