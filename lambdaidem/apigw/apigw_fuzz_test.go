package apigw_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// validKey is the key rule as the adapter documents it: the header's value,
// trimmed of SP and HTAB only, optionally in double quotes, is 1 to 255
// characters of visible ASCII other than '"', ',' and '\'.
func validKey(raw string) (string, bool) {
	k := strings.Trim(raw, " \t")
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if k == "" || len(k) > 255 {
		return "", false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < '!' || c > '~' || c == '"' || c == ',' || c == '\\' {
			return "", false
		}
	}
	return k, true
}

// fuzzClient sends POSTs to one HTTP API route guarded by one adapter,
// whose handler answers 201 with a body that names its run.
type fuzzClient struct {
	t    *testing.T
	h    func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	runs int
}

func newFuzzClient(t *testing.T) *fuzzClient {
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "Fuzz")
	if err != nil {
		t.Fatal(err)
	}
	c := &fuzzClient{t: t}
	c.h = a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		c.runs++
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: fmt.Sprintf(`{"run":%d,"secret":"result-%d"}`, c.runs, c.runs)}, nil
	})
	return c
}

func (c *fuzzClient) post(principal, key, contentType, body string, isBase64 bool) events.APIGatewayV2HTTPResponse {
	e := events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /payments", RawPath: "/payments",
		Headers: map[string]string{"idempotency-key": key, "content-type": contentType},
		Body:    body, IsBase64Encoded: isBase64,
	}
	e.RequestContext.HTTP.Method = "POST"
	if principal != "" {
		e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"iss": "https://issuer", "sub": principal}},
		}
	}
	resp, err := c.h(context.Background(), e)
	if err != nil {
		c.t.Fatalf("handler error: %v", err)
	}
	return resp
}

// FuzzKeyAndFingerprint drives arbitrary keys, content types and bodies
// through an HTTP API route and checks how the key and the fingerprint
// behave, from the outside:
//   - a key breaking the documented rule is refused with 400 and the
//     handler does not run; a valid one runs it once;
//   - the same request again is replayed, also when its body is sent
//     base64-encoded or its key in double quotes (they are the same key and
//     the same intent);
//   - a JSON body re-spaced is the same intent;
//   - another body with the same key is refused with 422, which reveals
//     nothing of the stored response;
//   - another principal with the same key runs afresh: keys never meet
//     across principals.
func FuzzKeyAndFingerprint(f *testing.F) {
	f.Add("7c0b3d9e-5d0a-4f8e-9a51-0c6a3bde1f00", "application/json", []byte(`{"amount":100,"currency":"EUR"}`))
	f.Add(`"quoted-key"`, "application/merge-patch+json", []byte(`{"b":1, "a":[1,2]}`))
	f.Add("  spaced  ", "text/plain", []byte("plain body"))
	f.Add("a,b", "application/json", []byte(`{}`))
	f.Add("k\x7f", "", []byte{0xff, 0xfe})
	f.Add(strings.Repeat("k", 255), "application/json; charset=utf-8", []byte(`[1, 2, 3]`))
	f.Add(strings.Repeat("k", 256), "application/json", []byte(`1`))
	f.Add(`"`, "application/json", []byte(`"s"`))
	f.Add("ключ", "application/json", []byte(`null`))
	f.Add("k", "application/json", []byte(``))

	f.Fuzz(func(t *testing.T, rawKey, contentType string, body []byte) {
		if strings.ContainsAny(rawKey, "\r\n") {
			return // not a header value API Gateway can deliver
		}
		c := newFuzzClient(t)
		first := c.post("alice", rawKey, contentType, string(body), false)
		key, valid := validKey(rawKey)
		if !valid {
			if first.StatusCode != 400 || c.runs != 0 {
				t.Fatalf("invalid key %q: got %d after %d runs, want 400 and no run", rawKey, first.StatusCode, c.runs)
			}
			return
		}
		if first.StatusCode != 201 || c.runs != 1 {
			t.Fatalf("valid key %q: got %d %s after %d runs", rawKey, first.StatusCode, first.Body, c.runs)
		}
		replays := map[string]events.APIGatewayV2HTTPResponse{
			"same request":   c.post("alice", rawKey, contentType, string(body), false),
			"base64 body":    c.post("alice", rawKey, contentType, base64.StdEncoding.EncodeToString(body), true),
			"quoted key":     c.post("alice", `"`+key+`"`, contentType, string(body), false),
			"key with space": c.post("alice", " "+key+" ", contentType, string(body), false),
		}
		// JSON that is not UTF-8 (RFC 8259 requires it) is hashed as bytes, so
		// that bodies differing only in invalid bytes are different requests;
		// so is JSON that FingerprintJSON documents it hashes as bytes (a
		// duplicate name, exact or case-folded; a body above
		// MaxCanonicalJSON): re-spaced, such a body is another request.
		respaced := " " + string(body) + "\n"
		canonical := func(doc string) bool {
			fp, err := lambdaidem.FingerprintJSON([]byte(doc))
			return err == nil && fp != lambdaidem.FingerprintBytes([]byte(doc))
		}
		if mt, _, err := mime.ParseMediaType(contentType); err == nil && json.Valid(body) && utf8.Valid(body) &&
			(mt == "application/json" || strings.HasSuffix(mt, "+json")) && canonical(respaced) {
			replays["re-spaced JSON"] = c.post("alice", key, contentType, respaced, false)
		}
		for name, resp := range replays {
			if resp.StatusCode != 201 || resp.Body != first.Body || resp.Headers["Idempotent-Replayed"] != "true" {
				t.Fatalf("%s: got %d %q %v, want the replay of %q", name, resp.StatusCode, resp.Body, resp.Headers, first.Body)
			}
		}
		other := c.post("alice", key, contentType, string(body)+"~", false)
		if other.StatusCode != 422 || strings.Contains(other.Body, "result-") {
			t.Fatalf("other body, same key: got %d %q, want 422 revealing nothing", other.StatusCode, other.Body)
		}
		bob := c.post("bob", key, contentType, string(body), false)
		if bob.StatusCode != 201 || bob.Body == first.Body || bob.Headers["Idempotent-Replayed"] != "" {
			t.Fatalf("another principal with the same key: got %d %q %v, want a fresh run", bob.StatusCode, bob.Body, bob.Headers)
		}
		if c.runs != 2 {
			t.Fatalf("the handler ran %d times, want 2 (alice once, bob once)", c.runs)
		}
	})
}
