package lambdaidem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

type order struct {
	ID     string `json:"order_id"`
	Tenant string `json:"tenant"`
	Total  int    `json:"total"`
}

type receipt struct {
	OrderID string `json:"order_id"`
	Charged int    `json:"charged"`
}

func orderSpec() lambdaidem.Spec[order, receipt] {
	return lambdaidem.Spec[order, receipt]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o order) (string, error) { return o.ID, nil },
		Scope:     func(_ context.Context, o order) (string, error) { return o.Tenant, nil },
	}
}

// wrap wraps h under spec, failing the test if the Spec is refused.
func wrap(t *testing.T, g *lambdaidem.Guard, spec lambdaidem.Spec[order, receipt], h func(context.Context, order) (receipt, error)) lambdaidem.Handler[order, receipt] {
	t.Helper()
	w, err := lambdaidem.NewWrapper(g, spec)
	if err != nil {
		t.Fatal(err)
	}
	return w.Wrap(h)
}

func TestWrapKeepsTheHandlerShape(t *testing.T) {
	f := newFixture(t)
	runs := 0
	var h func(context.Context, order) (receipt, error) = wrap(t, f.guard, orderSpec(), func(ctx context.Context, o order) (receipt, error) {
		runs++
		return receipt{OrderID: o.ID, Charged: o.Total}, nil
	})
	a, err := h(context.Background(), order{ID: "o1", Tenant: "acme", Total: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h(context.Background(), order{ID: "o1", Tenant: "acme", Total: 5})
	if err != nil || b != a || runs != 1 {
		t.Fatalf("duplicate = %+v, %v after %d runs; want the replay of %+v", b, err, runs, a)
	}
	if _, err := h(context.Background(), order{ID: "o1", Tenant: "other-tenant", Total: 5}); err != nil || runs != 2 {
		t.Fatalf("another tenant's same key: %v, %d runs; want its own run", err, runs)
	}
	if _, err := h(context.Background(), order{ID: "o1", Tenant: "acme", Total: 6}); !errors.Is(err, lambdaidem.ErrKeyReused) {
		t.Fatalf("changed payload = %v; want ErrKeyReused", err)
	}
	if _, err := h(context.Background(), order{Tenant: "acme"}); !errors.Is(err, lambdaidem.ErrMissingKey) {
		t.Fatalf("no key = %v; want ErrMissingKey", err)
	}
}

// A replayed terminal error is a *ReplayedError that prints the original
// message; through Invoke (what lambda.Start calls) it reaches the runtime
// as the original errorType and errorMessage.
func TestWrapReplaysTerminalErrors(t *testing.T) {
	f := newFixture(t)
	h := wrap(t, f.guard, orderSpec(), func(ctx context.Context, o order) (receipt, error) {
		return receipt{}, &declinedError{"card expired"}
	})
	_, first := h(context.Background(), order{ID: "o1"})
	var d *declinedError
	if !errors.As(first, &d) {
		t.Fatalf("first error = %#v; want the handler's *declinedError", first)
	}
	_, again := h(context.Background(), order{ID: "o1"})
	var re *lambdaidem.ReplayedError
	if !errors.As(again, &re) || re.Type != "declinedError" || again.Error() != first.Error() {
		t.Fatalf("replayed error = %#v (%q); want a *ReplayedError of type declinedError printing %q", again, again, first.Error())
	}
	_, viaRuntime := h.Invoke(context.Background(), []byte(`{"order_id":"o1"}`))
	var ire messages.InvokeResponse_Error
	if !errors.As(viaRuntime, &ire) || ire.Type != "declinedError" || ire.Message != first.Error() {
		t.Fatalf("Invoke's error = %#v; want errorType declinedError, message %q", viaRuntime, first.Error())
	}
}

func TestInvokeEncodesAsTheLambdaRuntimeDoes(t *testing.T) {
	f := newFixture(t)
	h := wrap(t, f.guard, orderSpec(), func(ctx context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID + "<&>", Charged: o.Total}, nil
	})
	out, err := h.Invoke(context.Background(), []byte(`{"order_id":"o1","total":3}`))
	if err != nil || string(out) != "{\"order_id\":\"o1<&>\",\"charged\":3}\n" {
		t.Fatalf("Invoke = %q, %v", out, err)
	}
	if _, err := h.Invoke(context.Background(), []byte(`{"order_id":`)); err == nil {
		t.Fatal("Invoke of malformed JSON succeeded")
	}
}

func TestNewWrapperRefusesMisconfiguration(t *testing.T) {
	f := newFixture(t)
	noOp := orderSpec()
	noOp.Operation = ""
	cases := []struct {
		name  string
		guard *lambdaidem.Guard
		spec  lambdaidem.Spec[order, receipt]
	}{
		{"nil guard", nil, orderSpec()},
		{"nil key", f.guard, lambdaidem.Spec[order, receipt]{Operation: "X"}},
		{"no operation", f.guard, noOp},
	}
	for _, c := range cases {
		if w, err := lambdaidem.NewWrapper(c.guard, c.spec); err == nil || w != nil {
			t.Errorf("%s: NewWrapper = %v, %v; want an error", c.name, w, err)
		}
	}
	// A nil handler is not a panic either: every call says what is wrong.
	h := wrap(t, f.guard, orderSpec(), nil)
	if _, err := h(context.Background(), order{ID: "o1"}); err == nil || !strings.Contains(err.Error(), "nil handler") {
		t.Fatalf("nil handler = %v; want an error naming it", err)
	}
}

// Spec.Reconcile gets the duplicate's event, so a provider that cannot be
// queried by key can be queried by what the event says.
func TestReconcileReceivesTheEvent(t *testing.T) {
	f := newFixture(t)
	spec := orderSpec()
	var seen order
	spec.Reconcile = func(ctx context.Context, o order, u lambdaidem.Unknown) (receipt, bool, error) {
		seen = o
		return receipt{OrderID: o.ID, Charged: o.Total}, true, nil
	}
	h := wrap(t, f.guard, spec, func(ctx context.Context, o order) (receipt, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return receipt{}, err
		}
		return receipt{}, errors.New("provider timed out")
	})
	in := order{ID: "o1", Tenant: "acme", Total: 7}
	if _, err := h(context.Background(), in); err == nil {
		t.Fatal("first attempt succeeded")
	}
	got, err := h(context.Background(), in)
	if err != nil || seen != in || got != (receipt{OrderID: "o1", Charged: 7}) {
		t.Fatalf("reconciled = %+v, %v with event %+v; want the reconciled receipt from event %+v", got, err, seen, in)
	}
}

// Do refuses what cannot run with an error, never a panic.
func TestDoRefusesMisuse(t *testing.T) {
	f := newFixture(t)
	fn := func(context.Context) (string, error) { return "", nil }
	cases := map[string]func() (string, error){
		"nil guard": func() (string, error) { return lambdaidem.Do(context.Background(), nil, call("k", "p"), fn) },
		"nil function": func() (string, error) {
			return lambdaidem.Do[string](context.Background(), f.guard, call("k", "p"), nil)
		},
		"no operation": func() (string, error) {
			return lambdaidem.Do(context.Background(), f.guard, lambdaidem.Call[string]{Key: "k"}, fn)
		},
	}
	for name, do := range cases {
		if _, err := do(); err == nil {
			t.Errorf("%s: Do succeeded", name)
		}
	}
}
