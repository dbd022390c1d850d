package apigw

import (
	"context"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// flavor converts between one event kind's response type and the engine's
// [httpengine.Response].
type flavor[Resp any] struct {
	// toResponse reads a handler's response.
	toResponse func(Resp) httpengine.Response
	// fromResponse writes a stored or rendered response.
	fromResponse func(httpengine.Response) Resp
}

// serve runs h for r under the engine's rules. A request the adapter
// cannot read at all comes with a non-nil refusal, answered once the key
// has been read (a request without a key where none is required goes to
// the handler as it is).
func serve[Resp any](ctx context.Context, a *Adapter, r *httpengine.Request, refusal *Problem, f flavor[Resp], h func(context.Context) (Resp, error)) (Resp, error) {
	key, pass, p := a.engine.Admit(ctx, r)
	switch {
	case p != nil:
		return f.fromResponse(p.Response()), nil
	case pass:
		return h(ctx)
	case refusal != nil:
		return f.fromResponse(refusal.Response()), nil
	}
	var first Resp // the handler's own response, returned as is
	out, outcome, err := a.engine.Serve(ctx, r, key, func(ctx context.Context) (httpengine.Response, error) {
		resp, err := h(ctx)
		if err != nil {
			return httpengine.Response{}, err
		}
		first = resp
		return f.toResponse(resp), nil
	})
	switch outcome {
	case httpengine.Fresh:
		return first, nil
	case httpengine.Failed:
		var zero Resp
		return zero, err
	case httpengine.Replayed:
		if a.onReplay != nil {
			a.onReplay(ctx, view(r), out.Header)
		}
	case httpengine.ConditionFailed:
		if a.conditionFailed != nil {
			if p := a.conditionFailed(ctx, view(r), err); p != nil {
				out = p.Response()
			}
		}
	}
	return f.fromResponse(out), nil
}
