package apigw_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// A replay carries the stored representation, not the first request's
// session: the response headers are stored by an allow-list.
func TestReplayCarriesRepresentationNotSession(t *testing.T) {
	first := http.Header{
		// The representation: stored.
		"Content-Type":        {"application/json; charset=utf-8"},
		"Content-Encoding":    {"identity"},
		"Content-Language":    {"en"},
		"Content-Disposition": {`inline; filename="receipt.json"`},
		"Location":            {"/payments/pay_1"},
		"Content-Location":    {"https://api.example.com/payments/pay_1"},
		"Cache-Control":       {"no-store"},
		"Expires":             {"0"},
		"Etag":                {`"v1"`},
		"Last-Modified":       {"Tue, 01 Dec 2026 12:00:00 GMT"},
		"Vary":                {"Accept"},
		"Link":                {`</payments/pay_1/refunds>; rel="refunds"`},
		"X-Payment-Status":    {"captured"},
		// The session, the moment, the connection: not stored.
		"X-Session-Id":                     {"s-1"},
		"X-Access-Key":                     {"AKIA…"},
		"X-Amz-Signature":                  {"abc"},
		"Www-Authenticate":                 {`Bearer realm="api"`},
		"Authentication-Info":              {`nextnonce="x"`},
		"X-Request-Id":                     {"req-first"},
		"X-Amzn-Requestid":                 {"amzn-first"},
		"Traceparent":                      {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Date":                             {"Tue, 01 Dec 2026 12:00:00 GMT"},
		"Access-Control-Allow-Origin":      {"https://app.example"},
		"Access-Control-Allow-Credentials": {"true"},
		"Set-Cookie":                       {"session=abc"},
		"Retry-After":                      {"5"},
		"Server-Timing":                    {"db;dur=53"},
	}
	cases := []struct {
		name    string
		opts    func(*apigw.Options)
		headers http.Header // changes to first
		kept    []string
		dropped []string
	}{
		{name: "default allow-list",
			kept: []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Disposition", "Location", "Content-Location",
				"Cache-Control", "Expires", "Etag", "Last-Modified", "Vary"},
			dropped: []string{"Link", "X-Payment-Status", "X-Session-Id", "X-Access-Key", "X-Amz-Signature", "Www-Authenticate",
				"Authentication-Info", "X-Request-Id", "X-Amzn-Requestid", "Traceparent", "Date", "Access-Control-Allow-Origin",
				"Access-Control-Allow-Credentials", "Set-Cookie", "Retry-After", "Server-Timing"}},
		{name: "headers the deployment adds",
			opts: func(o *apigw.Options) {
				o.ReplayHeaders = []string{"link", "X-Payment-Status", "X-Session-Id", "Set-Cookie", "WWW-Authenticate", "X-Amz-Signature", "X-Access-Key"}
			},
			kept:    []string{"Link", "X-Payment-Status"},
			dropped: []string{"X-Session-Id", "Set-Cookie", "Www-Authenticate", "X-Amz-Signature", "X-Access-Key"}},
		{name: "headers the deployment omits",
			opts:    func(o *apigw.Options) { o.ReplayHeaders = []string{"Link"}; o.OmitHeaders = []string{"etag", "Link"} },
			kept:    []string{"Content-Type", "Vary"},
			dropped: []string{"Etag", "Link"}},
		{name: "a presigned Location",
			headers: http.Header{
				"Location":         {"https://bucket.s3.amazonaws.com/receipt.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA&X-Amz-Signature=abc"},
				"Content-Location": {"https://user:pass@api.example.com/payments/pay_1"},
			},
			dropped: []string{"Location", "Content-Location"}},
		{name: "a Location with a fragment, a Content-Location with path parameters",
			headers: http.Header{
				"Location":         {"https://app.example/callback#access_token=eyJhbGciOi&token_type=bearer"},
				"Content-Location": {"/orders/42;jsessionid=0A1B2C3D"},
			},
			dropped: []string{"Location", "Content-Location"}},
		{name: "an empty fragment, a parameter on an inner segment",
			headers: http.Header{
				"Location":         {"/payments/pay_1#"},
				"Content-Location": {"/orders;sid=9/42"},
			},
			dropped: []string{"Location", "Content-Location"}},
		{name: "an escaped ';' and '#' are part of a segment",
			headers: http.Header{
				"Location":         {"/files/a%3Bb"},
				"Content-Location": {"/files/c%23d"},
			},
			kept: []string{"Location", "Content-Location"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &counter{reply: reply{Status: http.StatusCreated, Header: first.Clone(), Body: `{"id":"pay_1"}`}}
			for name, v := range c.headers {
				h.reply.Header[name] = v
			}
			opts := []func(*apigw.Options){}
			if c.opts != nil {
				opts = append(opts, c.opts)
			}
			a := newAdapter(t, memstore.New(), nil, opts...)
			got, err := sendV2(t, a, context.Background(), edit{}, h.handle)
			if err != nil || got.Header.Get("Date") == "" {
				t.Fatalf("first response: %v %v; want it as the handler returned it", got.Header, err)
			}
			replay, err := sendV2(t, a, context.Background(), edit{}, h.handle)
			if err != nil || replay.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("not a replay: %v %v", replay.Header, err)
			}
			for _, name := range c.kept {
				if replay.Header.Get(name) != h.reply.Header.Get(name) {
					t.Errorf("replayed %s = %q, want %q", name, replay.Header.Get(name), h.reply.Header.Get(name))
				}
			}
			for _, name := range c.dropped {
				if v := replay.Header.Get(name); v != "" {
					t.Errorf("replayed %s = %q, want it not stored", name, v)
				}
			}
		})
	}
}
