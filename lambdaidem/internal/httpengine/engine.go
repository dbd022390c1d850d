package httpengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Config is a front door's options in the engine's terms. The zero value
// of every field means the default its front door documents.
type Config struct {
	// Name is the front door's package name ("apigw", "httpidem"), for
	// errors and log lines.
	Name string
	// Header names the key's header. Default "Idempotency-Key".
	Header string
	// Key, if set, reads the key instead of Header.
	Key func(context.Context, *Request) (key string, present bool, err error)
	// RequireKey lists the methods that must carry a key. Default POST and
	// PATCH.
	RequireKey []string
	// MaxKeyLength caps the key's length in bytes. Default 255.
	MaxKeyLength int
	// Scope, if set, returns the principal instead of Request.Caller's.
	Scope func(context.Context, *Request) (string, error)
	// IdentityClaims and IdentityContextKeys name the JWT claims and Lambda
	// authorizer context values that identify a caller.
	IdentityClaims, IdentityContextKeys []string
	// RefuseAnonymous refuses requests that show no authorizer.
	RefuseAnonymous bool
	// Logger receives the front door's error lines. Default slog.Default.
	Logger *slog.Logger
	// Parts chooses the fingerprint's parts. Default AllParts.
	Parts Parts
	// Fingerprint, if set, returns the intent instead of the Parts.
	Fingerprint func(context.Context, *Request) (any, error)
	// Decided reports whether a status is stored. Default DecidedStatus.
	Decided func(status int) bool
	// ReplayHeaders and OmitHeaders add to and take from the headers stored
	// for replay.
	ReplayHeaders, OmitHeaders []string
}

// Engine serves requests of one operation under the HTTP idempotency
// rules. It is safe for concurrent use.
type Engine struct {
	guard     *lambdaidem.Guard
	operation string
	cfg       Config
	keys      identityKeys
	customKey bool // Config.Key was set
}

// New returns the Engine of operation under g, with c's defaults filled
// in. It returns an error, prefixed with c.Name, if g is nil, operation is
// empty or an option is invalid.
func New(g *lambdaidem.Guard, operation string, c Config) (*Engine, error) {
	if c.Name == "" {
		c.Name = "httpengine"
	}
	if g == nil {
		return nil, fmt.Errorf("%s: nil Guard", c.Name)
	}
	if operation == "" {
		return nil, fmt.Errorf("%s: empty operation", c.Name)
	}
	c.RequireKey = slices.Clone(c.RequireKey)
	c.OmitHeaders = slices.Clone(c.OmitHeaders)
	c.ReplayHeaders = slices.Clone(c.ReplayHeaders)
	c.IdentityClaims = slices.Clone(c.IdentityClaims)
	c.IdentityContextKeys = slices.Clone(c.IdentityContextKeys)
	customKey := c.Key != nil
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	keys := identityKeys{claims: c.IdentityClaims, context: c.IdentityContextKeys}
	return &Engine{guard: g, operation: operation, cfg: c, keys: keys, customKey: customKey}, nil
}

func (c *Config) setDefaults() error {
	if c.Header == "" {
		c.Header = "Idempotency-Key"
	}
	if !validToken(c.Header) {
		return fmt.Errorf("%s: Header %q is not a valid header name", c.Name, c.Header)
	}
	c.Header = textproto.CanonicalMIMEHeaderKey(c.Header)
	if c.RequireKey == nil {
		c.RequireKey = []string{"POST", "PATCH"}
	}
	for i, m := range c.RequireKey {
		if !validToken(m) {
			return fmt.Errorf("%s: RequireKey[%d] %q is not a method", c.Name, i, m)
		}
		c.RequireKey[i] = strings.ToUpper(m)
	}
	switch {
	case c.MaxKeyLength < 0:
		return fmt.Errorf("%s: MaxKeyLength must not be negative, got %d", c.Name, c.MaxKeyLength)
	case c.MaxKeyLength == 0:
		c.MaxKeyLength = 255
	}
	for i, name := range c.IdentityClaims {
		if name == "" {
			return fmt.Errorf("%s: IdentityClaims[%d] is empty", c.Name, i)
		}
	}
	for i, name := range c.IdentityContextKeys {
		if name == "" {
			return fmt.Errorf("%s: IdentityContextKeys[%d] is empty", c.Name, i)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Parts == 0 {
		c.Parts = AllParts
	}
	if c.Parts&^AllParts != 0 {
		return fmt.Errorf("%s: Parts has unknown bits", c.Name)
	}
	if c.Decided == nil {
		c.Decided = DecidedStatus
	}
	return nil
}

// CallerV1 reads a REST API event's caller.
func (e *Engine) CallerV1(rc *events.APIGatewayProxyRequestContext) Caller {
	return principalV1(rc, e.keys)
}

// CallerV2 reads an HTTP API event's caller.
func (e *Engine) CallerV2(rc *events.APIGatewayV2HTTPRequestContext) Caller {
	return principalV2(rc, e.keys)
}

// CallerURL reads a Function URL event's caller.
func (e *Engine) CallerURL(rc *events.LambdaFunctionURLRequestContext) Caller {
	return principalURL(rc)
}

// Outcome says what [Engine.Serve] answered. The engine never calls back
// into its front door once the handler has run: what a front door may
// change (a replay's headers, the problem of a failed business condition)
// comes back as an Outcome, and the front door applies its own options.
type Outcome int

const (
	// Rendered: the engine's Response is the answer (a problem).
	Rendered Outcome = iota
	// Fresh: the handler ran and its own response is the answer, stored or
	// not; the front door returns it as the handler wrote it.
	Fresh
	// Failed: the handler failed; its error is the answer. Nothing was
	// stored and the claim was released.
	Failed
	// Replayed: the Response is a stored one, marked Idempotent-Replayed,
	// its header a copy the front door may change (its OnReplay option).
	Replayed
	// ConditionFailed: a business condition of the staged writes failed at
	// commit (the error matches lambdaidem.ErrConditionFailed); nothing was
	// stored and the claim was released. The Response is the default
	// problem (409 condition-failed), which the front door's own mapping
	// (its ConditionFailed option) may replace.
	ConditionFailed
)

// Admit reads r's key before anything else of r is needed. pass reports a
// request that goes straight to the handler (a safe method, or no key
// where none is required); p a request refused with 400. Otherwise the
// caller goes on to [Engine.Serve] with key.
func (e *Engine) Admit(ctx context.Context, r *Request) (key string, pass bool, p *Problem) {
	if safeMethod(r.Method) {
		return "", true, nil
	}
	var present bool
	var err error
	if e.cfg.Key != nil {
		key, present, err = e.cfg.Key(ctx, r)
	} else {
		key, present, err = keyOf(r.Header, e.cfg.Header, e.cfg.MaxKeyLength)
	}
	if err == nil && len(key) > e.cfg.MaxKeyLength {
		err = fmt.Errorf("the idempotency key is %d bytes long; the limit is %d", len(key), e.cfg.MaxKeyLength)
	}
	switch {
	case err != nil:
		return "", false, problem(http.StatusBadRequest, ProblemInvalidKey, "Invalid idempotency key", err.Error())
	case !present && slices.Contains(e.cfg.RequireKey, r.Method):
		detail := fmt.Sprintf("%s requests must carry an idempotency key%s", r.Method, e.keyWhere())
		return "", false, problem(http.StatusBadRequest, ProblemMissingKey, "Missing idempotency key", detail)
	case !present:
		return "", true, nil
	}
	return key, false, nil
}

// handlerError carries a handler's error through Do. It does not unwrap,
// so a handler error is never taken for a terminal one: it is never stored.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// unstored carries a response that must not be stored through Do, so that
// Do releases the claim.
type unstored struct{ status int }

func (e *unstored) Error() string {
	return fmt.Sprintf("httpengine: status %d is not stored", e.status)
}

// Serve runs the handler, run, for r (whose key Admit returned) under the
// rules: it scopes and fingerprints r, claims its record, runs run once,
// stores the response if Config.Decided accepts its status (its headers
// cut to the allow-list), and answers every duplicate with the stored
// response marked Idempotent-Replayed. It returns Fresh when run's own
// response is the answer, Failed with run's error when run failed (logged,
// not stored, claim released), Replayed with a stored response,
// ConditionFailed with the default problem and the condition's error, and
// Rendered with the Response to send otherwise. run may return a [*Problem] as its error to refuse the request
// with it after it ran (nothing stored, claim released). A panic in run
// releases the claim and goes on up.
func (e *Engine) Serve(ctx context.Context, r *Request, key string, run func(context.Context) (Response, error)) (Response, Outcome, error) {
	call, p := e.call(ctx, r, key)
	if p != nil {
		return p.Response(), Rendered, nil
	}
	var fresh *Response // the stored form of run's response, to tell a fresh outcome from a replay
	out, err := lambdaidem.Do(ctx, e.guard, call, func(ctx context.Context) (*Response, error) {
		s, err := run(ctx)
		if err != nil {
			var p *Problem
			if errors.As(err, &p) {
				return nil, p
			}
			return nil, &handlerError{err}
		}
		if !e.cfg.Decided(s.Status) {
			return nil, &unstored{s.Status}
		}
		s.Header = storable(s.Header, e.cfg.ReplayHeaders, e.cfg.OmitHeaders)
		fresh = &s
		return fresh, nil
	})
	var he *handlerError
	var us *unstored
	var rp *Problem
	switch {
	case err == nil && out != nil && out == fresh:
		return Response{}, Fresh, nil
	case err == nil && out != nil:
		replay := *out
		replay.Header = out.Header.Clone()
		if replay.Header == nil {
			replay.Header = http.Header{}
		}
		replay.Header.Set(ReplayedHeader, "true")
		return replay, Replayed, nil
	case errors.As(err, &he):
		e.cfg.Logger.LogAttrs(ctx, slog.LevelError, e.cfg.Name+": handler failed; nothing stored, key released",
			slog.String("operation", e.operation), slog.String("route", r.Route), slog.Any("error", he.err))
		return Response{}, Failed, he.err
	case errors.As(err, &us):
		return Response{}, Fresh, nil
	case errors.As(err, &rp):
		return rp.Response(), Rendered, nil
	}
	if errors.Is(err, lambdaidem.ErrConditionFailed) {
		return conditionFailed().Response(), ConditionFailed, err
	}
	if errors.Is(err, lambdaidem.ErrNoTenant) {
		e.cfg.Logger.LogAttrs(ctx, slog.LevelError, e.cfg.Name+": request refused: the function declares tenants and the invocation names none",
			slog.String("operation", e.operation), slog.String("route", r.Route), slog.Any("error", err))
	}
	return e.refusal(err).Response(), Rendered, nil
}

// conditionFailed is the default problem for a request whose staged writes
// a business condition refused at commit.
func conditionFailed() *Problem {
	return problem(http.StatusConflict, ProblemConditionFailed, "Condition failed",
		"the request conflicts with the current state of a resource it changes; nothing was done, and the same request will fail the same way")
}

// keyWhere says where the engine reads the key, for messages.
func (e *Engine) keyWhere() string {
	if e.customKey {
		return ""
	}
	return " in the " + e.cfg.Header + " header"
}

// call derives the lambdaidem.Call of a request, or the problem that
// refuses it.
func (e *Engine) call(ctx context.Context, r *Request, key string) (lambdaidem.Call[*Response], *Problem) {
	principal := r.Caller.Principal
	if e.cfg.Scope != nil {
		var err error
		principal, err = e.cfg.Scope(ctx, r)
		if err != nil {
			var p *Problem
			if errors.As(err, &p) {
				return lambdaidem.Call[*Response]{}, p
			}
			return lambdaidem.Call[*Response]{}, problem(http.StatusInternalServerError, ProblemInternal, "Internal error", "the request's scope could not be determined")
		}
	}
	if principal == "" && (r.Caller.Authorizer != "" || e.cfg.RefuseAnonymous) {
		return lambdaidem.Call[*Response]{}, e.unidentified(ctx, r)
	}
	fp, err := e.fingerprint(ctx, r)
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return lambdaidem.Call[*Response]{}, p
		}
		return lambdaidem.Call[*Response]{}, problem(http.StatusInternalServerError, ProblemInternal, "Internal error", "the request could not be fingerprinted")
	}
	return lambdaidem.Call[*Response]{
		Operation:   e.operation,
		Scope:       principal + "\n" + r.Route,
		Key:         key,
		Fingerprint: fp,
	}, nil
}

// fingerprint is the fingerprint of r: of Config.Fingerprint's value, or
// of the Parts.
func (e *Engine) fingerprint(ctx context.Context, r *Request) (string, error) {
	if e.cfg.Fingerprint == nil {
		return fingerprint(r, e.cfg.Parts)
	}
	v, err := e.cfg.Fingerprint(ctx, r)
	if err != nil {
		return "", err
	}
	return lambdaidem.Fingerprint(v)
}

// refusal maps an error from Do to the problem the client gets. Details
// name the condition only: never a stored outcome, never a store's error.
func (e *Engine) refusal(err error) *Problem {
	var rec *lambdaidem.RecordError
	switch {
	case errors.Is(err, lambdaidem.ErrSealerMissing):
		return problem(http.StatusInternalServerError, ProblemKeyRefused, "Stored outcome cannot be opened",
			"this request's record is stored, encrypted, and this service is deployed without the key that opens it; it was not run again, and retrying will not help until the service is fixed")
	case errors.Is(err, lambdaidem.ErrNoTenant):
		return problem(http.StatusInternalServerError, ProblemUnidentifiedCaller, "Caller not identified",
			"this function runs in tenant isolation mode and the invocation names no tenant to scope idempotency keys by; it was not processed")
	case errors.Is(err, lambdaidem.ErrMissingKey):
		return problem(http.StatusBadRequest, ProblemMissingKey, "Missing idempotency key", "the request carries no idempotency key")
	case errors.Is(err, lambdaidem.ErrInvalidKey):
		return problem(http.StatusBadRequest, ProblemInvalidKey, "Invalid idempotency key", "the idempotency key is malformed or too long")
	case errors.Is(err, lambdaidem.ErrKeyReused):
		return problem(http.StatusUnprocessableEntity, ProblemKeyReused, "Idempotency key reused",
			"this idempotency key was already used with a different request; use a new key for a new request")
	case errors.Is(err, lambdaidem.ErrInProgress), errors.Is(err, lambdaidem.ErrLeaseLost):
		p := problem(http.StatusConflict, ProblemInProgress, "Request in progress",
			"a request with this idempotency key is still being processed; retry after the time in Retry-After")
		p.RetryAfter = time.Second
		if errors.As(err, &rec) {
			p.RetryAfter = rec.RetryAfter(e.guard.Options().Now())
		}
		return p
	case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
		return problem(http.StatusConflict, ProblemOutcomeUnknown, "Outcome being reconciled",
			"an earlier attempt with this idempotency key may have taken effect; its outcome is being reconciled, retry later")
	case errors.Is(err, lambdaidem.ErrOutcomeTooLarge):
		return problem(http.StatusInternalServerError, ProblemResponseTooLarge, "Response too large to store",
			"the response is larger than the idempotency store keeps; nothing was committed, and retrying will not help")
	case errors.Is(err, lambdaidem.ErrEffectRejected):
		return problem(http.StatusInternalServerError, ProblemInternal, "Internal error",
			"the request's writes were refused by the store; nothing was stored, and retrying will not help")
	case errors.Is(err, lambdaidem.ErrStoreUnavailable):
		p := problem(http.StatusServiceUnavailable, ProblemStoreUnavailable, "Service unavailable",
			"the request was not processed; retry later with the same idempotency key")
		p.RetryAfter = time.Second
		return p
	case errors.Is(err, lambdaidem.ErrKeyUnavailable):
		p := problem(http.StatusServiceUnavailable, ProblemKeyServiceUnavailable, "Key service unavailable",
			"this request's record is stored, encrypted (its outcome, or the attempt still running), and the key service that opens it is unavailable; nothing ran again and nothing was released: retry later with the same idempotency key")
		p.RetryAfter = time.Second
		return p
	case errors.Is(err, lambdaidem.ErrKeyRefused):
		return problem(http.StatusInternalServerError, ProblemKeyRefused, "Stored outcome cannot be opened",
			"this request's record is stored, encrypted, and the service may not use its key; it was not run again, and retrying will not help until the service is fixed")
	}
	return problem(http.StatusInternalServerError, ProblemInternal, "Internal error",
		"the request failed; a retry with the same idempotency key is safe")
}

// unidentified logs why r names no caller, and how to fix it, and returns
// the problem that refuses it. The line names kinds and options, never a
// claim, a key or a body.
func (e *Engine) unidentified(ctx context.Context, r *Request) *Problem {
	fix, detail := r.Caller.Fix, "the request shows an authorizer but no caller this service can identify; it was not processed"
	switch {
	case r.Caller.Authorizer == "":
		fix = "the event shows no authorizer and %[1]s.Options.RefuseAnonymous is set: attach an authorizer to this route, or unset RefuseAnonymous"
		detail = "the request carries no authenticated caller and this operation does not accept anonymous requests; it was not processed"
	case r.Caller.Principal != "":
		fix = "%[1]s.Options.Scope returned an empty scope for an authenticated request: return a non-empty one"
	case r.Caller.Authorizer == AuthorizerNone && e.cfg.Scope != nil:
		fix = "%[1]s.Options.Scope returned an empty scope: return the caller's identity, or a non-empty constant to let callers share one scope on purpose"
		detail = "the request carries no caller identity this service can scope idempotency keys by; it was not processed"
	case r.Caller.Authorizer == AuthorizerNone:
		detail = "the request carries no caller identity this service can scope idempotency keys by; it was not processed"
	}
	e.cfg.Logger.LogAttrs(ctx, slog.LevelError, e.cfg.Name+": request refused: no caller identity to scope idempotency keys by",
		slog.String("operation", e.operation), slog.String("route", r.Route), slog.String("authorizer", r.Caller.Authorizer), slog.String("fix", fmt.Sprintf(fix, e.cfg.Name)))
	return problem(http.StatusInternalServerError, ProblemUnidentifiedCaller, "Caller not identified", detail)
}

// Refusal is the problem a front door answers with for err, an error from
// the Guard that is not the handler's: the same mapping [Engine.Serve]
// uses.
func (e *Engine) Refusal(err error) *Problem { return e.refusal(err) }
