package apigw_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// FuzzRequestParsing sends arbitrary methods, key headers, content types
// and bodies through the three wrappers: nothing panics, and bad input
// never yields a 5xx (the handler itself always answers 201).
func FuzzRequestParsing(f *testing.F) {
	f.Add("POST", "Idempotency-Key", "7c0b3d9e", "application/json", []byte(`{"a":1}`), false, false)
	f.Add("PATCH", "idempotency-key", `"quoted"`, "application/merge-patch+json", []byte(`{"a":`), true, false)
	f.Add("POST", "IDEMPOTENCY-KEY", "a,b", "text/plain", []byte{0xff, 0x00}, false, true)
	f.Add("post", "Idempotency-Key", "\x00", "application/json; charset=\x00", []byte(`[1,2`), true, true)
	f.Add("GET", "X", "", "", []byte(nil), false, false)
	f.Add("DELETE", "Idempotency-Key", "k\u00e9", ";;;", []byte(`{"a":1e999}`), false, false)

	ok := func(r int) bool { return r > 0 && r < 500 }
	f.Fuzz(func(t *testing.T, method, headerName, key, contentType string, body []byte, encode, breakBase64 bool) {
		text := string(body)
		if encode {
			text = base64.StdEncoding.EncodeToString(body)
			if breakBase64 {
				text += "!"
			}
		}
		headers := map[string]string{headerName: key, "content-type": contentType}
		a, err := apigw.New(mustGuard(t, memstore.New()), "Fuzz")
		if err != nil {
			t.Fatal(err)
		}

		v1 := a.WrapV1(func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			return events.APIGatewayProxyResponse{StatusCode: 201}, nil
		})
		r1, err := v1(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: method, Resource: "/x", Path: "/x",
			Headers: headers, MultiValueHeaders: map[string][]string{headerName: {key, key}}, Body: text, IsBase64Encoded: encode})
		if err != nil || !ok(r1.StatusCode) {
			t.Errorf("v1: %d %s %v", r1.StatusCode, r1.Body, err)
		}
		v2 := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
		})
		e2 := events.APIGatewayV2HTTPRequest{RouteKey: "$default", RawPath: "/x", RawQueryString: key, Headers: headers, Body: text, IsBase64Encoded: encode}
		e2.RequestContext.HTTP.Method = method
		r2, err := v2(context.Background(), e2)
		if err != nil || !ok(r2.StatusCode) {
			t.Errorf("v2: %d %s %v", r2.StatusCode, r2.Body, err)
		}
		u := a.WrapURL(func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
			return events.LambdaFunctionURLResponse{StatusCode: 201}, nil
		})
		e3 := events.LambdaFunctionURLRequest{RawPath: "/x", Headers: headers, Body: text, IsBase64Encoded: encode}
		e3.RequestContext.HTTP.Method = method
		r3, err := u(context.Background(), e3)
		if err != nil || !ok(r3.StatusCode) {
			t.Errorf("url: %d %s %v", r3.StatusCode, r3.Body, err)
		}
	})
}

func mustGuard(t *testing.T, store *memstore.Store) *lambdaidem.Guard {
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
