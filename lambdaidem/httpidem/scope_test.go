package httpidem_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// urlEvent is a Function URL event as lambdaurl.Wrap receives it: a keyed
// POST from an IAM caller (AuthType AWS_IAM), or from nobody (userARN "").
func urlEvent(userARN, body string) *events.LambdaFunctionURLRequest {
	e := &events.LambdaFunctionURLRequest{
		RawPath: "/payments",
		Headers: map[string]string{"idempotency-key": "k-1", "content-type": "application/json"},
		Body:    body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc.lambda-url.eu-west-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
		},
	}
	if userARN != "" {
		e.RequestContext.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: userARN},
		}
	}
	return e
}

// invokeURL runs h as lambdaurl.Wrap runs it for one event, and reads the
// streamed response.
func invokeURL(t *testing.T, h http.Handler, e *events.LambdaFunctionURLRequest) (int, http.Header, string) {
	t.Helper()
	resp, err := lambdaurl.Wrap(h)(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	return resp.StatusCode, header, string(body)
}

func counting(runs *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"run":`+string(rune('0'+n))+`}`)
	})
}

func guard(t *testing.T, store lambdaidem.Store) *lambdaidem.Guard {
	t.Helper()
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Logger = discard })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Under lambdaurl the middleware reads the Function URL event's IAM
// caller, with no option: two callers' keys never meet, and an AuthType
// NONE request runs in the anonymous scope, as apigw's WrapURL does.
func TestFunctionURLCallerScopesKeys(t *testing.T) {
	mw, err := httpidem.New(guard(t, memstore.New()), "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	h := mw(counting(&runs))
	alice, bob := "arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/bob"
	steps := []struct {
		arn      string
		replayed bool
		runs     int32
	}{
		{alice, false, 1}, {alice, true, 1}, {bob, false, 2}, {bob, true, 2}, {"", false, 3}, {"", true, 3},
	}
	for i, s := range steps {
		status, header, _ := invokeURL(t, h, urlEvent(s.arn, `{"amount":1}`))
		if status != 201 || (header.Get("Idempotent-Replayed") == "true") != s.replayed || runs.Load() != s.runs {
			t.Fatalf("step %d (%q): %d replayed=%q after %d runs; want replayed %v after %d", i, s.arn, status, header.Get("Idempotent-Replayed"), runs.Load(), s.replayed, s.runs)
		}
	}
	// A Cognito identity pool's shared role session is no caller: refused.
	status, _, body := invokeURL(t, h, urlEvent("arn:aws:sts::123456789012:assumed-role/pool/CognitoIdentityCredentials", `{}`))
	if status != 500 || !strings.Contains(body, httpidem.ProblemUnidentifiedCaller) {
		t.Fatalf("shared role session: %d %s, want 500 %s", status, body, httpidem.ProblemUnidentifiedCaller)
	}
}

// The same Function URL request through apigw's WrapURL and through
// lambdaurl.Wrap with the middleware is one operation: a retry served by
// either replays the other's outcome.
func TestFunctionURLDoorsShareRecords(t *testing.T) {
	store := memstore.New()
	g := guard(t, store)
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httpidem.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	wrapURL := a.WrapURL(func(ctx context.Context, e events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		runs.Add(1)
		return events.LambdaFunctionURLResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"by":"apigw"}`}, nil
	})
	h := mw(counting(&runs))
	arn := "arn:aws:iam::123456789012:user/alice"

	first, err := wrapURL(context.Background(), *urlEvent(arn, `{"amount": 1}`))
	if err != nil || first.StatusCode != 201 {
		t.Fatalf("apigw: %+v %v", first, err)
	}
	status, header, body := invokeURL(t, h, urlEvent(arn, `{ "amount":1 }`))
	if status != 201 || body != `{"by":"apigw"}` || header.Get("Idempotent-Replayed") != "true" || runs.Load() != 1 {
		t.Fatalf("middleware retry: %d %s %v after %d runs; want apigw's outcome replayed", status, body, header, runs.Load())
	}
	if status, _, _ := invokeURL(t, h, urlEvent(arn, `{"amount":2}`)); status != 422 {
		t.Fatalf("middleware, other body: %d, want 422", status)
	}
}

// In a container the middleware reads no identity: without Options.Scope a
// keyed request is refused with 500 and one error line naming the option,
// never run in a scope every caller shares; a Scope that returns an empty
// scope is refused too; a constant is a scope shared on purpose.
func TestContainerScopeFailsClosed(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cases := []struct {
		name   string
		scope  func(*http.Request) (string, error)
		status int
		fix    string
	}{
		{"no Scope", nil, 500, "httpidem.Options.Scope"},
		{"empty scope", func(*http.Request) (string, error) { return "", nil }, 500, "returned an empty scope"},
		{"a scope refusing with a problem", func(*http.Request) (string, error) {
			return "", &httpidem.Problem{Type: "https://example.com/unauthorized", Title: "Unauthorized", Status: 401, Detail: "sign in"}
		}, 401, ""},
		{"a constant shared on purpose", func(*http.Request) (string, error) { return "everyone", nil }, 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs.Reset()
			mw, err := httpidem.New(guard(t, memstore.New()), "CreatePayment", func(o *httpidem.Options) {
				o.Scope = c.scope
				o.Logger = logger
			})
			if err != nil {
				t.Fatal(err)
			}
			var runs atomic.Int32
			rec := serve(mw(counting(&runs)), post(`{}`))
			if rec.Code != c.status {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body.String(), c.status)
			}
			if c.status == 500 {
				var p map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &p)
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				if p["type"] != httpidem.ProblemUnidentifiedCaller || runs.Load() != 0 || len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], c.fix) {
					t.Fatalf("problem %v after %d runs, log %q; want unidentified-caller, not run, one error line naming %q", p, runs.Load(), logs.String(), c.fix)
				}
			}
		})
	}
}

// One JWT on both sides: a Lambda function behind an HTTP API JWT
// authorizer (apigw.WrapV2) and a container that verifies the same token
// and scopes by httpidem.JWTPrincipal dedupe each other's retries on one
// table, whichever serves first; another subject's key never meets them.
func TestJWTLambdaAndContainerShareRecords(t *testing.T) {
	for _, lambdaFirst := range []bool{true, false} {
		name := map[bool]string{true: "Lambda first", false: "container first"}[lambdaFirst]
		t.Run(name, func(t *testing.T) {
			store := memstore.New()
			g := guard(t, store)
			const iss, sub = "https://idp.example.com/", "3f1c9a7e"
			var runs atomic.Int32

			a, err := apigw.New(g, "CreatePayment")
			if err != nil {
				t.Fatal(err)
			}
			lambda := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
				runs.Add(1)
				return events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"by":"lambda"}`}, nil
			})
			// One token per subject, as the identity provider issues it. The
			// HTTP API's JWT authorizer verifies it and hands the function its
			// claims (as strings); the container verifies it itself.
			event := func(sub string) events.APIGatewayV2HTTPRequest {
				tokenClaims, err := verifyJWT(signJWT(iss, sub))
				if err != nil {
					t.Fatal(err)
				}
				eventClaims := map[string]string{}
				for k, v := range tokenClaims {
					eventClaims[k] = fmt.Sprint(v)
				}
				return events.APIGatewayV2HTTPRequest{
					RouteKey: "POST /payments", RawPath: "/payments", RawQueryString: "dry_run=false",
					Headers: map[string]string{"idempotency-key": "k-1", "content-type": "application/json"},
					Body:    `{"amount":1250,"currency":"EUR"}`,
					RequestContext: events.APIGatewayV2HTTPRequestContext{
						RouteKey:   "POST /payments",
						HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
						Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: eventClaims}},
					},
				}
			}

			// The container: its authentication verifies the bearer token and
			// puts the claims in the context; the route is the ServeMux
			// pattern, as the HTTP API's route key.
			mw, err := httpidem.New(g, "CreatePayment", func(o *httpidem.Options) {
				o.Scope = func(r *http.Request) (string, error) {
					c, _ := r.Context().Value(claimsKey{}).(map[string]any)
					iss, _ := c["iss"].(string)
					sub, _ := c["sub"].(string)
					return httpidem.JWTPrincipal(iss, sub), nil
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("POST /payments", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(201)
				_, _ = io.WriteString(w, `{"by":"container"}`)
			})))
			authenticated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := verifyJWT(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
				if err != nil {
					http.Error(w, err.Error(), http.StatusUnauthorized)
					return
				}
				mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, c)))
			})
			container := func(sub string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", "/payments?dry_run=false", strings.NewReader(`{"currency":"EUR", "amount":1250}`))
				r.Header.Set("Idempotency-Key", "k-1")
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+signJWT(iss, sub))
				return serve(authenticated, r)
			}

			var firstBody string
			if lambdaFirst {
				out, err := lambda(context.Background(), event(sub))
				if err != nil || out.StatusCode != 201 {
					t.Fatalf("lambda: %+v %v", out, err)
				}
				firstBody = out.Body
				rec := container(sub)
				if rec.Code != 201 || rec.Body.String() != firstBody || rec.Header().Get("Idempotent-Replayed") != "true" {
					t.Fatalf("container retry: %d %s %v; want the Lambda's outcome replayed", rec.Code, rec.Body.String(), rec.Header())
				}
			} else {
				rec := container(sub)
				if rec.Code != 201 {
					t.Fatalf("container: %d %s", rec.Code, rec.Body.String())
				}
				firstBody = rec.Body.String()
				out, err := lambda(context.Background(), event(sub))
				if err != nil || out.StatusCode != 201 || out.Body != firstBody || out.Headers["Idempotent-Replayed"] != "true" {
					t.Fatalf("lambda retry: %+v %v; want the container's outcome replayed", out, err)
				}
			}
			if runs.Load() != 1 {
				t.Fatalf("%d runs, want 1", runs.Load())
			}
			// Another subject with the same key is another operation.
			if rec := container("someone-else"); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "" || runs.Load() != 2 {
				t.Fatalf("another subject: %d %v after %d runs; want it run", rec.Code, rec.Header(), runs.Load())
			}
		})
	}
}

type claimsKey struct{}

// jwtSecret signs the test's tokens (HS256); a real issuer signs with its
// private key and a verifier checks its published key.
var jwtSecret = []byte("test-issuer-secret")

// signJWT issues the token of a subject: iss, sub, aud and exp claims.
func signJWT(iss, sub string) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload, _ := json.Marshal(map[string]any{"iss": iss, "sub": sub, "aud": "payments", "exp": 4102444800})
	signing := header + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, jwtSecret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// verifyJWT checks a token's signature and expiry and returns its claims.
func verifyJWT(token string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	mac := hmac.New(sha256.New, jwtSecret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, errors.New("bad signature")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var c map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	exp, _ := c["exp"].(json.Number)
	if n, err := exp.Int64(); err != nil || time.Now().Unix() > n {
		return nil, errors.New("expired")
	}
	return c, nil
}

// Behind aws-lambda-go-api-proxy on a REST API: the request context that
// Options.APIGatewayV1 hands over names the Lambda authorizer's
// principalId, which scopes the keys as apigw.WrapV1 scopes them, and its
// resource path is the route; a context that shows an authorizer but no
// caller is refused.
func TestAPIGatewayV1Context(t *testing.T) {
	type restKey struct{}
	mw, err := httpidem.New(guard(t, memstore.New()), "CreatePayment", func(o *httpidem.Options) {
		o.Logger = discard
		o.APIGatewayV1 = func(ctx context.Context) (events.APIGatewayProxyRequestContext, bool) {
			rc, ok := ctx.Value(restKey{}).(events.APIGatewayProxyRequestContext)
			return rc, ok
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	h := mw(counting(&runs))
	send := func(principal, path string) *httptest.ResponseRecorder {
		rc := events.APIGatewayProxyRequestContext{ResourcePath: "/payments/{id}", HTTPMethod: "POST",
			Authorizer: map[string]any{"principalId": principal}}
		if principal == "" {
			rc.Authorizer = map[string]any{"plan": "pro"} // a coarse context: no caller
		}
		r := post(`{}`)
		r.URL.Path = path
		return serve(h, r.WithContext(context.WithValue(r.Context(), restKey{}, rc)))
	}
	steps := []struct {
		principal, path string
		status          int
		replayed        bool
		runs            int32
	}{
		{"alice", "/payments/1", 201, false, 1},
		{"alice", "/payments/1", 201, true, 1},
		{"alice", "/payments/2", 422, false, 1}, // another resource of the route, the same key
		{"bob", "/payments/1", 201, false, 2},
		{"", "/payments/1", 500, false, 2},
	}
	for i, s := range steps {
		rec := send(s.principal, s.path)
		if rec.Code != s.status || (rec.Header().Get("Idempotent-Replayed") == "true") != s.replayed || runs.Load() != s.runs {
			t.Fatalf("step %d: %d %v %s after %d runs; want %d replayed=%v after %d", i, rec.Code, rec.Header(), rec.Body.String(), runs.Load(), s.status, s.replayed, s.runs)
		}
	}
}
