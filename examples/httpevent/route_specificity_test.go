package httpevent_test

import (
	"testing"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"
)

// API Gateway picks the most specific route, not the first declared: a
// full match before a path variable, a path variable before a greedy one,
// a greedy one with a longer literal prefix first, and $default last
// (docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html).
func TestMostSpecificRouteWins(t *testing.T) {
	routes, err := httpevent.NewRoutes(
		"$default",
		"ANY /{proxy+}",
		"GET /pets/{proxy+}",
		"GET /pets/dog/{id}",
		"GET /pets/dog/1",
	)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ method, path, want string }{
		{"GET", "/pets/dog/1", "GET /pets/dog/1"},
		{"GET", "/pets/dog/2", "GET /pets/dog/{id}"},
		{"GET", "/pets/cat/1", "GET /pets/{proxy+}"},
		{"POST", "/pets/cat", "ANY /{proxy+}"},
		{"GET", "/", "$default"},
	}
	for _, c := range cases {
		key, _, ok := routes.Match(c.method, c.path)
		if !ok || key != c.want {
			t.Errorf("%s %s matched %q, want %q", c.method, c.path, key, c.want)
		}
	}
}
