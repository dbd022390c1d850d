package httpidem_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// FuzzRequestMapping checks that the middleware maps a request onto the
// engine as apigw does: any Function URL event sent first to apigw's
// WrapURL and then, as its retry, through lambdaurl.Wrap to the middleware
// on the same table is one operation. If apigw ran it, the middleware
// replays apigw's outcome (same route, scope, key and fingerprint); if
// apigw refused it, the middleware refuses it with the same status and
// body. Neither panics.
func FuzzRequestMapping(f *testing.F) {
	f.Add("POST", "/payments", "dry_run=false", "application/json", "k-1", `{"amount":1}`, "alice")
	f.Add("post", "//payments/", "a=1&a=2", "application/json; charset=UTF-8", `"k-1"`, `{ "amount" : 1 }`, "")
	f.Add("PATCH", "/%70ayments/./x/../y", "x=%zz", "text/plain", "k 1", "plain", "bob")
	f.Add("PUT", "/a%2fb", ";", "application/merge-patch+json", "", `{"a":1,"A":2}`, "carol")
	f.Add("DELETE", "/payments", "", "", strings.Repeat("k", 256), "", "dave")
	f.Add("POST", "/payments", "q", "application/json", "k,2", `[1,2`, "")
	f.Fuzz(func(t *testing.T, method, path, query, contentType, key, body, user string) {
		if strings.ContainsAny(path, "?#") || strings.Contains(query, "#") || !strings.HasPrefix(path, "/") {
			t.Skip("a client cannot send these in a path or a query")
		}
		if method == "" {
			t.Skip("a Function URL event always names its method (http.NewRequest, in lambdaurl.Wrap, would take it for GET)")
		}
		e := events.LambdaFunctionURLRequest{
			RawPath:        path,
			RawQueryString: query,
			Headers:        map[string]string{},
			Body:           body,
			RequestContext: events.LambdaFunctionURLRequestContext{
				DomainName: "abc.lambda-url.eu-west-1.on.aws",
				HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path},
			},
		}
		if contentType != "" {
			e.Headers["content-type"] = contentType
		}
		if key != "" {
			e.Headers["idempotency-key"] = key
		}
		if user != "" {
			e.RequestContext.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{
				IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::123456789012:user/" + user},
			}
		}
		if _, err := http.NewRequest(method, "https://"+e.RequestContext.DomainName+path+"?"+query, nil); err != nil {
			t.Skip("lambdaurl.Wrap refuses this event before any handler runs")
		}

		g := guard(t, memstore.New())
		a, err := apigw.New(g, "Op", func(o *apigw.Options) { o.Logger = discard })
		if err != nil {
			t.Fatal(err)
		}
		mw, err := httpidem.New(g, "Op", func(o *httpidem.Options) { o.Logger = discard })
		if err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		first, err := a.WrapURL(func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
			runs.Add(1)
			return events.LambdaFunctionURLResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"by":"apigw"}`}, nil
		})(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		ranFirst := runs.Load() == 1

		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{"by":"httpidem"}`)
		}))
		resp, err := lambdaurl.Wrap(h)(context.Background(), &e)
		if err != nil {
			t.Skipf("lambdaurl.Wrap: %v", err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		replayed := resp.Headers["Idempotent-Replayed"] == "true"
		passes := !replayed && first.Headers["Idempotent-Replayed"] == "" && runs.Load() == 2 && first.StatusCode == 201
		switch {
		case ranFirst && replayed:
			if resp.StatusCode != 201 || string(b) != first.Body {
				t.Fatalf("middleware replayed %d %s, want apigw's %d %s", resp.StatusCode, b, first.StatusCode, first.Body)
			}
		case ranFirst && passes:
			// A request that is not keyed (a safe method, no key where none is
			// required) passes through both doors.
		case ranFirst:
			t.Fatalf("apigw ran %s %q %q; the middleware answered %d %s (replayed %v) after %d runs: not the same operation",
				method, path, query, resp.StatusCode, b, replayed, runs.Load())
		default:
			if resp.StatusCode != first.StatusCode || string(b) != first.Body || runs.Load() != 0 {
				t.Fatalf("apigw refused with %d %s; the middleware answered %d %s after %d runs", first.StatusCode, first.Body, resp.StatusCode, b, runs.Load())
			}
		}
	})
}
