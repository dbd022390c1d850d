package apigw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// flavor converts between one event kind's response type and the shared
// [response].
type flavor[Resp any] struct {
	// toResponse reads a handler's response.
	toResponse func(Resp) response
	// fromResponse writes a stored or rendered response.
	fromResponse func(response) Resp
}

// handlerError carries a handler's error through Do. It does not unwrap,
// so a handler error is never taken for a terminal one: it is never stored.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// unstored carries a response that must not be stored through Do, so that
// Do releases the claim.
type unstored struct{ status int }

func (e *unstored) Error() string { return fmt.Sprintf("apigw: status %d is not stored", e.status) }

// serve runs h for r under the adapter's rules. A request the adapter
// cannot read at all comes with a non-nil refusal.
func serve[Resp any](ctx context.Context, a *Adapter, r *Request, refusal *Problem, f flavor[Resp], h func(context.Context) (Resp, error)) (Resp, error) {
	if safeMethod(r.Method) {
		return h(ctx)
	}
	key, present, err := a.opts.Key(ctx, r)
	if err == nil && len(key) > a.opts.MaxKeyLength {
		err = fmt.Errorf("the idempotency key is %d bytes long; the limit is %d", len(key), a.opts.MaxKeyLength)
	}
	switch {
	case err != nil:
		return f.fromResponse(problem(http.StatusBadRequest, ProblemInvalidKey, "Invalid idempotency key", err.Error()).response()), nil
	case !present && slices.Contains(a.opts.RequireKey, r.Method):
		detail := fmt.Sprintf("%s requests must carry an idempotency key%s", r.Method, a.keyWhere())
		return f.fromResponse(problem(http.StatusBadRequest, ProblemMissingKey, "Missing idempotency key", detail).response()), nil
	case !present:
		return h(ctx)
	case refusal != nil:
		return f.fromResponse(refusal.response()), nil
	}
	call, p := a.call(ctx, r, key)
	if p != nil {
		return f.fromResponse(p.response()), nil
	}

	var first Resp      // the handler's own response, returned as is
	var fresh *response // its stored form, to tell a fresh outcome from a replay
	out, err := lambdaidem.Do(ctx, a.guard, call, func(ctx context.Context) (*response, error) {
		resp, err := h(ctx)
		if err != nil {
			return nil, &handlerError{err}
		}
		first = resp
		s := f.toResponse(resp)
		if !a.opts.Decided(s.Status) {
			return nil, &unstored{s.Status}
		}
		s.Header = storable(s.Header, a.opts.ReplayHeaders, a.opts.OmitHeaders)
		fresh = &s
		return fresh, nil
	})
	var he *handlerError
	var us *unstored
	switch {
	case err == nil && out != nil && out == fresh:
		return first, nil
	case err == nil && out != nil:
		replay := *out
		replay.Header = out.Header.Clone()
		if replay.Header == nil {
			replay.Header = http.Header{}
		}
		replay.Header.Set(replayedHeader, "true")
		if a.opts.OnReplay != nil {
			a.opts.OnReplay(ctx, r, replay.Header)
		}
		return f.fromResponse(replay), nil
	case errors.As(err, &he):
		a.opts.Logger.LogAttrs(ctx, slog.LevelError, "apigw: handler failed; nothing stored, key released",
			slog.String("operation", a.operation), slog.String("route", r.Route), slog.Any("error", he.err))
		var zero Resp
		return zero, he.err
	case errors.As(err, &us):
		return first, nil
	}
	if errors.Is(err, lambdaidem.ErrConditionFailed) {
		return f.fromResponse(a.conditionFailed(ctx, r, err).response()), nil
	}
	return f.fromResponse(a.refusal(err).response()), nil
}

// conditionFailed is the problem for a request whose staged writes a
// business condition refused at commit.
func (a *Adapter) conditionFailed(ctx context.Context, r *Request, err error) *Problem {
	if h := a.opts.ConditionFailed; h != nil {
		if p := h(ctx, r, err); p != nil {
			return p
		}
	}
	return problem(http.StatusConflict, ProblemConditionFailed, "Condition failed",
		"the request conflicts with the current state of a resource it changes; nothing was done, and the same request will fail the same way")
}

// keyWhere says where the adapter reads the key, for messages.
func (a *Adapter) keyWhere() string {
	if a.customKey {
		return ""
	}
	return " in the " + a.opts.Header + " header"
}

// call derives the lambdaidem.Call of a request, or the problem that
// refuses it.
func (a *Adapter) call(ctx context.Context, r *Request, key string) (lambdaidem.Call[*response], *Problem) {
	principal, err := a.opts.Scope(ctx, r)
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return lambdaidem.Call[*response]{}, p
		}
		return lambdaidem.Call[*response]{}, problem(http.StatusInternalServerError, ProblemInternal, "Internal error", "the request's scope could not be determined")
	}
	if principal == "" && (r.Authorizer != "" || a.opts.RefuseAnonymous) {
		return lambdaidem.Call[*response]{}, a.unidentified(ctx, r)
	}
	fp, err := a.fingerprint(ctx, r)
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return lambdaidem.Call[*response]{}, p
		}
		return lambdaidem.Call[*response]{}, problem(http.StatusInternalServerError, ProblemInternal, "Internal error", "the request could not be fingerprinted")
	}
	return lambdaidem.Call[*response]{
		Operation:   a.operation,
		Scope:       principal + "\n" + r.Route,
		Key:         key,
		Fingerprint: fp,
	}, nil
}

// refusal maps an error from Do to the problem the client gets. Details
// name the condition only: never a stored outcome, never a store's error.
func (a *Adapter) refusal(err error) *Problem {
	var rec *lambdaidem.RecordError
	switch {
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
			p.RetryAfter = rec.RetryAfter(a.guard.Options().Now())
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
	case errors.Is(err, lambdaidem.ErrKeyUnavailable):
		p := problem(http.StatusServiceUnavailable, ProblemKeyServiceUnavailable, "Key service unavailable",
			"the outcome of this request is stored, encrypted, and the key service that opens it is unavailable; retry later with the same idempotency key and it will be replayed")
		p.RetryAfter = time.Second
		return p
	case errors.Is(err, lambdaidem.ErrKeyRefused):
		return problem(http.StatusInternalServerError, ProblemKeyRefused, "Stored outcome cannot be opened",
			"the outcome of this request is stored, encrypted, and the service may not use its key; it was not run again, and retrying will not help until the service is fixed")
	case errors.Is(err, lambdaidem.ErrStoreUnavailable):
		p := problem(http.StatusServiceUnavailable, ProblemStoreUnavailable, "Service unavailable",
			"the request was not processed; retry later with the same idempotency key")
		p.RetryAfter = time.Second
		return p
	}
	return problem(http.StatusInternalServerError, ProblemInternal, "Internal error",
		"the request failed; a retry with the same idempotency key is safe")
}

// unidentified logs why r names no caller, and how to fix it, and returns
// the problem that refuses it. The line names kinds and options, never a
// claim, a key or a body.
func (a *Adapter) unidentified(ctx context.Context, r *Request) *Problem {
	fix, detail := r.fix, "the request shows an authorizer but no caller this service can identify; it was not processed"
	switch {
	case r.Authorizer == "":
		fix = "the event shows no authorizer and apigw.Options.RefuseAnonymous is set: attach an authorizer to this route, or unset RefuseAnonymous"
		detail = "the request carries no authenticated caller and this operation does not accept anonymous requests; it was not processed"
	case r.Principal != "":
		fix = "apigw.Options.Scope returned an empty scope for an authenticated request: return a non-empty one"
	}
	a.opts.Logger.LogAttrs(ctx, slog.LevelError, "apigw: request refused: no caller identity to scope idempotency keys by",
		slog.String("operation", a.operation), slog.String("route", r.Route), slog.String("authorizer", r.Authorizer), slog.String("fix", fix))
	return problem(http.StatusInternalServerError, ProblemUnidentifiedCaller, "Caller not identified", detail)
}
