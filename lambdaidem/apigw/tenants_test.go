package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// tenantRow is one event shape of the tenant matrix: the scope it gets, or
// its refusal.
type tenantRow struct {
	name    string
	fixture string               // testdata/<fixture>: v1-*, v2-* or url-*
	opts    func(*apigw.Options) // options of the adapter, if any
	edit    func(any)            // changes the loaded event, if set
	// want is the principal, or "" for a refused or an anonymous row.
	want string
	// kind is Request.Authorizer.
	kind    string
	refused bool
	// other turns the event into another caller's, for the two-user test
	// (every row with a principal has one).
	other func(any)
}

func tenantRows() []tenantRow {
	const (
		pool      = `"https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEfGhI"`
		identity  = "eu-west-1:0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
		cognitoID = "cognito:" + identity
	)
	v1 := func(fn func(e *events.APIGatewayProxyRequest)) func(any) {
		return func(e any) { fn(e.(*events.APIGatewayProxyRequest)) }
	}
	v2 := func(fn func(e *events.APIGatewayV2HTTPRequest)) func(any) {
		return func(e any) { fn(e.(*events.APIGatewayV2HTTPRequest)) }
	}
	url := func(fn func(e *events.LambdaFunctionURLRequest)) func(any) {
		return func(e any) { fn(e.(*events.LambdaFunctionURLRequest)) }
	}
	claims := func(name, value string) func(any) {
		return v2(func(e *events.APIGatewayV2HTTPRequest) { e.RequestContext.Authorizer.JWT.Claims[name] = value })
	}
	lambdaCtx := func(name string, value any) func(any) {
		return v2(func(e *events.APIGatewayV2HTTPRequest) { e.RequestContext.Authorizer.Lambda[name] = value })
	}
	restCtx := func(name string, value any) func(any) {
		return v1(func(e *events.APIGatewayProxyRequest) { e.RequestContext.Authorizer[name] = value })
	}
	return []tenantRow{
		// REST APIs (payload format 1.0).
		{name: "REST, Cognito user pool authorizer", fixture: "v1-rest-cognito.json",
			want: "jwt:" + pool + "|0a1b2c3d-4e5f-6789-abcd-ef0123456789", kind: apigw.AuthorizerJWT,
			other: v1(func(e *events.APIGatewayProxyRequest) {
				e.RequestContext.Authorizer["claims"].(map[string]any)["sub"] = "9f8e7d6c-5b4a-3210-fedc-ba9876543210"
			})},
		{name: "REST, Cognito user pool token without sub", fixture: "v1-rest-cognito.json",
			edit: v1(func(e *events.APIGatewayProxyRequest) {
				delete(e.RequestContext.Authorizer["claims"].(map[string]any), "sub")
			}),
			kind: apigw.AuthorizerJWT, refused: true},
		{name: "REST, Cognito user pool token without sub, username named", fixture: "v1-rest-cognito.json",
			opts: func(o *apigw.Options) { o.IdentityClaims = []string{"cognito:username"} },
			edit: v1(func(e *events.APIGatewayProxyRequest) {
				delete(e.RequestContext.Authorizer["claims"].(map[string]any), "sub")
			}),
			want: "jwt-claim:" + pool + `|"cognito:username"|alice`, kind: apigw.AuthorizerJWT,
			other: v1(func(e *events.APIGatewayProxyRequest) {
				e.RequestContext.Authorizer["claims"].(map[string]any)["cognito:username"] = "bob"
			})},
		{name: "REST, Lambda authorizer (TOKEN or REQUEST) with principalId", fixture: "v1-rest-lambda-authorizer.json",
			want: "lambda:merchant-42", kind: apigw.AuthorizerLambda, other: restCtx("principalId", "merchant-43")},
		{name: "REST, Lambda authorizer with a context only", fixture: "v1-rest-lambda-context-only.json",
			kind: apigw.AuthorizerLambda, refused: true},
		{name: "REST, Lambda authorizer with a context only, userId named", fixture: "v1-rest-lambda-context-only.json",
			opts: func(o *apigw.Options) { o.IdentityContextKeys = []string{"tenantId", "userId"} },
			want: `lambda-context:"userId"|u-1001`, kind: apigw.AuthorizerLambda, other: restCtx("userId", "u-1002")},
		{name: "REST, Lambda authorizer, a numeric id named", fixture: "v1-rest-lambda-context-only.json",
			opts: func(o *apigw.Options) { o.IdentityContextKeys = []string{"userId"} },
			edit: restCtx("userId", float64(1001)),
			want: `lambda-context:"userId"|1001`, kind: apigw.AuthorizerLambda, other: restCtx("userId", float64(1002))},
		{name: "REST, Lambda authorizer, a numeric id past 2^53 named", fixture: "v1-rest-lambda-context-only.json",
			opts: func(o *apigw.Options) { o.IdentityContextKeys = []string{"userId"} },
			edit: restCtx("userId", float64(1<<60)), kind: apigw.AuthorizerLambda, refused: true},
		{name: "REST, IAM", fixture: "v1-rest-iam.json",
			want: "iam:arn:aws:iam::123456789012:user/checkout-service", kind: apigw.AuthorizerIAM,
			other: v1(func(e *events.APIGatewayProxyRequest) {
				e.RequestContext.Identity.UserArn = "arn:aws:iam::123456789012:user/refund-service"
			})},
		{name: "REST, IAM with an access key only", fixture: "v1-rest-iam.json",
			edit: v1(func(e *events.APIGatewayProxyRequest) {
				id := &e.RequestContext.Identity
				id.UserArn, id.Caller, id.User = "", "", ""
			}),
			kind: apigw.AuthorizerIAM, refused: true},
		{name: "REST, Cognito identity (IAM with identity pool credentials)", fixture: "v1-rest-cognito-identity.json",
			want: cognitoID, kind: apigw.AuthorizerCognitoIdentity,
			other: v1(func(e *events.APIGatewayProxyRequest) {
				e.RequestContext.Identity.CognitoIdentityID = "eu-west-1:99999999-4b5a-6978-8a9b-0c1d2e3f4a5b"
			})},
		{name: "REST, Cognito's shared role session without the identity id", fixture: "v1-rest-cognito-identity.json",
			edit: v1(func(e *events.APIGatewayProxyRequest) { e.RequestContext.Identity.CognitoIdentityID = "" }),
			kind: apigw.AuthorizerIAM, refused: true},
		{name: "REST, API key only", fixture: "v1-rest-apikey.json",
			want: "apikey:a1b2c3d4e5", kind: apigw.AuthorizerAPIKey,
			other: v1(func(e *events.APIGatewayProxyRequest) { e.RequestContext.Identity.APIKeyID = "f6g7h8i9j0" })},
		{name: "REST, no authorization", fixture: "v1-rest-anonymous.json"},
		{name: "REST, no authorization, RefuseAnonymous", fixture: "v1-rest-anonymous.json",
			opts: func(o *apigw.Options) { o.RefuseAnonymous = true }, refused: true},

		// HTTP APIs (payload format 2.0).
		{name: "HTTP API, JWT authorizer with sub", fixture: "v2-http-jwt.json",
			want: "jwt:" + pool + "|3f1c9a7e-2b4d-4e6f-8a1b-9c0d2e3f4a5b", kind: apigw.AuthorizerJWT,
			other: claims("sub", "5a6b7c8d-0000-4e6f-8a1b-9c0d2e3f4a5b")},
		{name: "HTTP API, JWT authorizer without sub", fixture: "v2-http-jwt-no-sub.json",
			kind: apigw.AuthorizerJWT, refused: true},
		{name: "HTTP API, JWT authorizer without sub, email named", fixture: "v2-http-jwt-no-sub.json",
			opts: func(o *apigw.Options) { o.IdentityClaims = []string{"email"} },
			want: `jwt-claim:"https://idp.example.com/"|"email"|alice@example.com`, kind: apigw.AuthorizerJWT,
			other: claims("email", "bob@example.com")},
		{name: "HTTP API, JWT authorizer without sub, a claim it lacks named", fixture: "v2-http-jwt-no-sub.json",
			opts: func(o *apigw.Options) { o.IdentityClaims = []string{"username"} },
			kind: apigw.AuthorizerJWT, refused: true},
		{name: "HTTP API, Lambda authorizer simple response without a context", fixture: "v2-http-lambda-no-context.json",
			kind: apigw.AuthorizerUnrecognized, refused: true},
		{name: "HTTP API, Lambda authorizer with an empty context", fixture: "v2-http-lambda-no-context.json",
			edit: v2(func(e *events.APIGatewayV2HTTPRequest) { e.RequestContext.Authorizer.Lambda = map[string]any{} }),
			kind: apigw.AuthorizerLambda, refused: true},
		{name: "HTTP API, Lambda authorizer with a coarse context", fixture: "v2-http-lambda-coarse.json",
			kind: apigw.AuthorizerLambda, refused: true},
		{name: "HTTP API, Lambda authorizer with userId, not named", fixture: "v2-http-lambda-authorizer.json",
			kind: apigw.AuthorizerLambda, refused: true},
		{name: "HTTP API, Lambda authorizer with userId named", fixture: "v2-http-lambda-authorizer.json",
			opts: func(o *apigw.Options) { o.IdentityContextKeys = []string{"userId"} },
			want: `lambda-context:"userId"|u-77`, kind: apigw.AuthorizerLambda, other: lambdaCtx("userId", "u-78")},
		{name: "HTTP API, Lambda authorizer with sub in its context", fixture: "v2-http-lambda-coarse.json",
			edit: lambdaCtx("sub", "u-77"),
			want: "lambda:u-77", kind: apigw.AuthorizerLambda, other: lambdaCtx("sub", "u-78")},
		{name: "HTTP API, IAM", fixture: "v2-http-iam.json",
			want: "iam:arn:aws:sts::123456789012:assumed-role/checkout/checkout", kind: apigw.AuthorizerIAM,
			other: v2(func(e *events.APIGatewayV2HTTPRequest) {
				e.RequestContext.Authorizer.IAM.UserARN = "arn:aws:sts::123456789012:assumed-role/refunds/refunds"
			})},
		{name: "HTTP API, IAM with a Cognito identity", fixture: "v2-http-iam-cognito.json",
			want: cognitoID, kind: apigw.AuthorizerIAM,
			other: v2(func(e *events.APIGatewayV2HTTPRequest) {
				e.RequestContext.Authorizer.IAM.CognitoIdentity.IdentityID = "eu-west-1:99999999-4b5a-6978-8a9b-0c1d2e3f4a5b"
			})},
		{name: "HTTP API, IAM with Cognito's shared role session only", fixture: "v2-http-iam-cognito.json",
			edit: v2(func(e *events.APIGatewayV2HTTPRequest) {
				e.RequestContext.Authorizer.IAM.CognitoIdentity = events.APIGatewayV2HTTPRequestContextAuthorizerCognitoIdentity{}
			}),
			kind: apigw.AuthorizerIAM, refused: true},
		{name: "HTTP API, no authorizer", fixture: "v2-http-anonymous.json"},
		{name: "HTTP API, no authorizer, RefuseAnonymous", fixture: "v2-http-anonymous.json",
			opts: func(o *apigw.Options) { o.RefuseAnonymous = true }, refused: true},

		// Function URLs.
		{name: "Function URL, AuthType AWS_IAM", fixture: "url-iam.json",
			want: "iam:arn:aws:iam::123456789012:user/checkout-service", kind: apigw.AuthorizerIAM,
			other: url(func(e *events.LambdaFunctionURLRequest) {
				e.RequestContext.Authorizer.IAM.UserARN = "arn:aws:iam::123456789012:user/refund-service"
			})},
		{name: "Function URL, AWS_IAM with Cognito's shared role session", fixture: "url-iam.json",
			edit: url(func(e *events.LambdaFunctionURLRequest) {
				iam := e.RequestContext.Authorizer.IAM
				iam.UserARN = "arn:aws:sts::123456789012:assumed-role/Cognito_PaymentsAuth_Role/CognitoIdentityCredentials"
				iam.CallerID = "AROACKCEVSQ6C2EXAMPLE:CognitoIdentityCredentials"
			}),
			kind: apigw.AuthorizerIAM, refused: true},
		{name: "Function URL, AuthType NONE", fixture: "url-none.json"},
		{name: "Function URL, AuthType NONE, RefuseAnonymous", fixture: "url-none.json",
			opts: func(o *apigw.Options) { o.RefuseAnonymous = true }, refused: true},
	}
}

// tenantSend sends the row's fixture, changed by edits, through a with a
// handler that answers 201 with the body "run <n>", and returns the reply.
func tenantSend(t *testing.T, a *apigw.Adapter, fixture string, runs *int, edits ...func(any)) reply {
	t.Helper()
	apply := func(e any) {
		for _, fn := range edits {
			if fn != nil {
				fn(e)
			}
		}
	}
	ctx := context.Background()
	switch {
	case strings.HasPrefix(fixture, "v1-"):
		e := load[events.APIGatewayProxyRequest](t, fixture)
		apply(&e)
		out, err := a.WrapV1(func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			*runs++
			return events.APIGatewayProxyResponse{StatusCode: http.StatusCreated, Body: "run " + string(rune('0'+*runs))}, nil
		})(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return reply{Status: out.StatusCode, Header: unflat(out.Headers), Body: out.Body}
	case strings.HasPrefix(fixture, "v2-"):
		e := load[events.APIGatewayV2HTTPRequest](t, fixture)
		apply(&e)
		out, err := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			*runs++
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: "run " + string(rune('0'+*runs))}, nil
		})(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return reply{Status: out.StatusCode, Header: unflat(out.Headers), Body: out.Body}
	default:
		e := load[events.LambdaFunctionURLRequest](t, fixture)
		apply(&e)
		out, err := a.WrapURL(func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
			*runs++
			return events.LambdaFunctionURLResponse{StatusCode: http.StatusCreated, Body: "run " + string(rune('0'+*runs))}, nil
		})(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return reply{Status: out.StatusCode, Header: unflat(out.Headers), Body: out.Body}
	}
}

// TestTenantMatrix: every event shape gets the scope of its caller, or is
// refused with 500 unidentified-caller and one error log line naming the
// fix; never a scope shared by callers the event cannot tell apart.
func TestTenantMatrix(t *testing.T) {
	for _, row := range tenantRows() {
		t.Run(row.name, func(t *testing.T) {
			var logs bytes.Buffer
			opts := func(o *apigw.Options) {
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				if row.opts != nil {
					row.opts(o)
				}
			}
			// What the event names, through a Scope that records it.
			var seen *apigw.Request
			spy := newAdapter(t, memstore.New(), nil, opts, func(o *apigw.Options) {
				o.Scope = func(_ context.Context, r *apigw.Request) (string, error) { seen = r; return r.Principal, nil }
			})
			runs := 0
			tenantSend(t, spy, row.fixture, &runs, row.edit)
			if seen == nil {
				t.Fatal("Scope was not called")
			}
			if seen.Principal != row.want || seen.Authorizer != row.kind {
				t.Errorf("principal %q, authorizer %q; want %q, %q", seen.Principal, seen.Authorizer, row.want, row.kind)
			}

			// The default scope, end to end.
			logs.Reset()
			runs = 0
			a := newAdapter(t, memstore.New(), nil, opts)
			r := tenantSend(t, a, row.fixture, &runs, row.edit)
			if row.refused {
				var p apigw.Problem
				_ = json.Unmarshal([]byte(r.Body), &p)
				if r.Status != http.StatusInternalServerError || p.Type != apigw.ProblemUnidentifiedCaller || runs != 0 {
					t.Fatalf("got %d %q after %d runs, want 500 %s and no run", r.Status, r.Body, runs, apigw.ProblemUnidentifiedCaller)
				}
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "fix=") || !strings.Contains(lines[0], "apigw.Options.") {
					t.Errorf("log: %q, want one error line naming the fix", logs.String())
				}
				for _, secret := range []string{"alice", "u-77", "u-1001", "AROACKCEVSQ6C2EXAMPLE", "gold", "pro\""} {
					if strings.Contains(logs.String(), secret) {
						t.Errorf("the log line holds %q", secret)
					}
				}
				return
			}
			if r.Status != http.StatusCreated || runs != 1 || logs.Len() != 0 {
				t.Fatalf("got %d %q after %d runs, log %q; want 201 after one run, no log", r.Status, r.Body, runs, logs.String())
			}
			// The same caller again: the stored response.
			if r := tenantSend(t, a, row.fixture, &runs, row.edit); r.Header.Get("Idempotent-Replayed") != "true" || runs != 1 {
				t.Fatalf("the same caller again: %d %v after %d runs, want a replay", r.Status, r.Header, runs)
			}
			if row.want == "" {
				return // anonymous: one shared scope, as documented
			}
			if row.other == nil {
				t.Fatal("an authenticated row needs a second caller")
			}
			// Another caller, the same key and body: a run of its own.
			r = tenantSend(t, a, row.fixture, &runs, row.edit, row.other)
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" || runs != 2 || r.Body != "run 2" {
				t.Fatalf("a second caller with the same key got %d %q (replayed %q) after %d runs; want a run of its own",
					r.Status, r.Body, r.Header.Get("Idempotent-Replayed"), runs)
			}
		})
	}
}

// A Scope function that returns an empty scope for an authenticated event
// is refused too: Scope is the escape hatch, not a way around the rule.
func TestEmptyScopeForAnAuthenticatedEventIsRefused(t *testing.T) {
	var logs bytes.Buffer
	a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		o.Scope = func(context.Context, *apigw.Request) (string, error) { return "", nil }
	})
	runs := 0
	r := tenantSend(t, a, "v2-http-jwt.json", &runs)
	if r.Status != http.StatusInternalServerError || runs != 0 || !strings.Contains(logs.String(), "Scope returned an empty scope") {
		t.Fatalf("got %d after %d runs, log %q", r.Status, runs, logs.String())
	}
	// A constant scope, chosen on purpose, is the deployment's call.
	b := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
		o.Scope = func(context.Context, *apigw.Request) (string, error) { return "public", nil }
	})
	if r := tenantSend(t, b, "v2-http-jwt-no-sub.json", &runs); r.Status != http.StatusCreated {
		t.Fatalf("a constant scope: %d", r.Status)
	}
}

func TestIdentityOptionsAreValidated(t *testing.T) {
	g := newGuardForExamples()
	for name, fn := range map[string]func(*apigw.Options){
		"empty claim":       func(o *apigw.Options) { o.IdentityClaims = []string{"email", ""} },
		"empty context key": func(o *apigw.Options) { o.IdentityContextKeys = []string{""} },
	} {
		if _, err := apigw.New(g, "Op", fn); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
