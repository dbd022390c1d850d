package httpidem_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The route scopes keys and its path parameters are part of the
// fingerprint: one key reused on another resource of the same route is
// refused, whether the parameters come from the ServeMux pattern, from a
// pattern the router names (Options.Route) or, where a pattern's values
// cannot be read, from the normalized path standing in for them; without a
// pattern, the normalized path is the route.
func TestRouteAndPathParameters(t *testing.T) {
	cases := []struct {
		name    string
		route   func(*http.Request) string
		pattern string // registered on a ServeMux; "" to wrap the handler alone
		first   string // paths
		same    string // the same resource, spelled otherwise: replayed
		other   string // another resource: refused with 422 (same route) or run (another route)
		want    int
	}{
		{name: "ServeMux pattern", pattern: "POST /payments/{id}", first: "/payments/1", same: "/payments/1", other: "/payments/2", want: 422},
		{name: "a wildcard inside a segment (Options.Route)", route: func(*http.Request) string { return "/files/{name}.txt" },
			first: "/files/a.txt", same: "/files/a.txt", other: "/files/b.txt", want: 422},
		{name: "a regular expression (Options.Route)", route: func(*http.Request) string { return "/payments/{id:[0-9]+}" },
			first: "/payments/1", same: "//payments/1/", other: "/payments/2", want: 422},
		{name: "no pattern: the normalized path", first: "/payments/1", same: "//payments/./1/", other: "/payments/2", want: 201},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			mw := newMiddleware(t, memstore.New(), nil, func(o *httpidem.Options) { o.Route = c.route })
			var h http.Handler = mw(counting(&runs))
			if c.pattern != "" {
				mux := http.NewServeMux()
				mux.Handle(c.pattern, h)
				h = mux
			}
			send := func(path string) *httptest.ResponseRecorder {
				r := post(`{}`)
				r.URL.Path, r.RequestURI = path, path
				return serve(h, r)
			}
			if rec := send(c.first); rec.Code != 201 {
				t.Fatalf("first: %d %s", rec.Code, rec.Body.String())
			}
			if rec := send(c.same); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "true" {
				t.Fatalf("the same resource: %d %v %s, want the replay", rec.Code, rec.Header(), rec.Body.String())
			}
			rec := send(c.other)
			if rec.Code != c.want || (c.want == 422 && !strings.Contains(rec.Body.String(), httpidem.ProblemKeyReused)) {
				t.Fatalf("another resource: %d %s, want %d", rec.Code, rec.Body.String(), c.want)
			}
		})
	}
}
