package apigw_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func TestPrincipalFromAuthorizerContexts(t *testing.T) {
	cases := []struct {
		fixture string
		want    string
	}{
		{"v1-rest-lambda-authorizer.json", "lambda:merchant-42"},
		{"v1-rest-cognito.json", `jwt:"https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEfGhI"|0a1b2c3d-4e5f-6789-abcd-ef0123456789`},
		{"v1-rest-iam.json", "iam:arn:aws:iam::123456789012:user/checkout-service"},
		{"v1-rest-apikey.json", "apikey:a1b2c3d4e5"},
		{"v2-http-jwt.json", `jwt:"https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEfGhI"|3f1c9a7e-2b4d-4e6f-8a1b-9c0d2e3f4a5b`},
		{"v2-http-lambda-authorizer.json", "lambda#"}, // a context without a principal: its hash
		{"v2-http-iam.json", "iam:arn:aws:sts::123456789012:assumed-role/checkout/checkout"},
		{"v2-http-anonymous.json", ""},
		{"url-iam.json", "iam:arn:aws:iam::123456789012:user/checkout-service"},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			var got *apigw.Request
			a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
				o.Scope = func(_ context.Context, r *apigw.Request) (string, error) { got = r; return r.Principal, nil }
			})
			switch {
			case strings.HasPrefix(c.fixture, "v1-"):
				a.WrapV1(func(ctx context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
					return events.APIGatewayProxyResponse{StatusCode: 201}, nil
				})(context.Background(), load[events.APIGatewayProxyRequest](t, c.fixture))
			case strings.HasPrefix(c.fixture, "v2-"):
				a.WrapV2(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
					return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
				})(context.Background(), load[events.APIGatewayV2HTTPRequest](t, c.fixture))
			default:
				a.WrapURL(func(ctx context.Context, _ events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
					return events.LambdaFunctionURLResponse{StatusCode: 201}, nil
				})(context.Background(), load[events.LambdaFunctionURLRequest](t, c.fixture))
			}
			if got == nil {
				t.Fatal("Scope was not called")
			}
			if c.want == "lambda#" {
				if !strings.HasPrefix(got.Principal, "lambda#") || len(got.Principal) < 20 {
					t.Errorf("principal %q, want a hash of the Lambda authorizer context", got.Principal)
				}
				return
			}
			if got.Principal != c.want {
				t.Errorf("principal %q, want %q", got.Principal, c.want)
			}
			if got.Method != "POST" || got.Route != "POST /payments" || got.Path != "/payments" || got.Query.Get("dry_run") != "false" || len(got.Body) == 0 {
				t.Errorf("request view %+v", got)
			}
		})
	}
}

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
