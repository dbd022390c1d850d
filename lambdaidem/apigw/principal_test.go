package apigw_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func TestScopeMayRefuseWithAProblem(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
		o.Scope = func(_ context.Context, r *apigw.Request) (string, error) {
			if r.Principal == "" {
				return "", &apigw.Problem{Type: "https://example.com/problems/unauthenticated", Title: "Unauthenticated", Status: 401, Detail: "sign in first"}
			}
			return r.Principal, nil
		}
	})
	out, err := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		t.Error("the handler ran")
		return events.APIGatewayV2HTTPResponse{}, nil
	})(context.Background(), load[events.APIGatewayV2HTTPRequest](t, "v2-http-anonymous.json"))
	if err != nil || out.StatusCode != 401 || out.Headers["Content-Type"] != "application/problem+json" {
		t.Errorf("got %d %v %v", out.StatusCode, out.Headers, err)
	}
}

func TestInvalidOptionsAreErrors(t *testing.T) {
	cases := map[string]func(*apigw.Options){
		"header with a space":  func(o *apigw.Options) { o.Header = "Idempotency Key" },
		"negative key length":  func(o *apigw.Options) { o.MaxKeyLength = -1 },
		"method not a token":   func(o *apigw.Options) { o.RequireKey = []string{"PO ST"} },
		"unknown fingerprints": func(o *apigw.Options) { o.Parts = 1 << 7 },
	}
	g := newGuardForExamples()
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := apigw.New(g, "Op", fn); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := apigw.New(nil, "Op"); err == nil {
		t.Error("nil guard: no error")
	}
	if _, err := apigw.New(g, ""); err == nil {
		t.Error("empty operation: no error")
	}
}

func TestCustomHeaderAndParts(t *testing.T) {
	h := &counter{}
	a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
		o.Header = "x-request-key"
		o.Parts = apigw.PartMethod | apigw.PartRoute | apigw.PartBody // the query does not matter
	})
	e := edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"X-Request-KEY": "k-1"}}
	sendV2(t, a, context.Background(), e, h.handle)
	e.query = "changed"
	r, _ := sendV2(t, a, context.Background(), e, h.handle)
	if h.runs.Load() != 1 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("runs %d, status %d: want a replay despite the other query", h.runs.Load(), r.Status)
	}
}
