package lambdaidem_test

import (
	"context"
	"errors"
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

func TestWrapKeepsTheHandlerShape(t *testing.T) {
	f := newFixture(t)
	runs := 0
	var h func(context.Context, order) (receipt, error) = lambdaidem.Wrap(f.guard, orderSpec(), func(ctx context.Context, o order) (receipt, error) {
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

func TestWrapReplaysTerminalErrorsToLambdaUnchanged(t *testing.T) {
	f := newFixture(t)
	h := lambdaidem.Wrap(f.guard, orderSpec(), func(ctx context.Context, o order) (receipt, error) {
		return receipt{}, &declinedError{"card expired"}
	})
	_, first := h(context.Background(), order{ID: "o1"})
	var d *declinedError
	if !errors.As(first, &d) {
		t.Fatalf("first error = %#v; want the handler's *declinedError", first)
	}
	_, again := h(context.Background(), order{ID: "o1"})
	var ire messages.InvokeResponse_Error
	if !errors.As(again, &ire) || ire.Type != "declinedError" || ire.Message != first.Error() {
		t.Fatalf("replayed error = %#v; want errorType declinedError, message %q", again, first.Error())
	}
}

func TestWrapPanicsOnMisconfiguration(t *testing.T) {
	f := newFixture(t)
	h := func(context.Context, order) (receipt, error) { return receipt{}, nil }
	cases := map[string]func(){
		"nil guard": func() { lambdaidem.Wrap(nil, orderSpec(), h) },
		"nil key":   func() { lambdaidem.Wrap(f.guard, lambdaidem.Spec[order, receipt]{Operation: "X"}, h) },
		"no operation": func() {
			s := orderSpec()
			s.Operation = ""
			lambdaidem.Wrap(f.guard, s, h)
		},
	}
	for name, fn := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Wrap did not panic", name)
				}
			}()
			fn()
		}()
	}
}
