package httpevent_test

import (
	"reflect"
	"testing"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"
)

func TestRoutesMatch(t *testing.T) {
	routes, err := httpevent.NewRoutes("POST /payments", "GET /payments/{id}", "ANY /files/{path+}")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method, path string
		key          string
		params       map[string]string
	}{
		{"POST", "/payments", "POST /payments", nil},
		{"post", "/payments/", "POST /payments", nil},
		{"GET", "/payments/pay_1", "GET /payments/{id}", map[string]string{"id": "pay_1"}},
		{"DELETE", "/files/a/b/c.txt", "ANY /files/{path+}", map[string]string{"path": "a/b/c.txt"}},
		{"GET", "/payments", "", nil},
		{"GET", "/payments/a/b", "", nil},
		{"PUT", "/payments", "", nil},
		{"GET", "/files", "", nil},
	}
	for _, c := range cases {
		key, params, ok := routes.Match(c.method, c.path)
		if key != c.key || ok != (c.key != "") || !reflect.DeepEqual(params, c.params) {
			t.Errorf("%s %s: got %q %v %v, want %q %v", c.method, c.path, key, params, ok, c.key, c.params)
		}
	}
}

func TestDefaultRouteMatchesAnything(t *testing.T) {
	routes, _ := httpevent.NewRoutes("GET /x", "$default")
	if key, _, ok := routes.Match("PATCH", "/anything/at/all"); !ok || key != "$default" {
		t.Errorf("got %q %v", key, ok)
	}
}

func TestBadRoutes(t *testing.T) {
	for _, k := range []string{"/payments", "POST payments", "GET /{a+}/b", ""} {
		if _, err := httpevent.NewRoutes(k); err == nil {
			t.Errorf("%q: no error", k)
		}
	}
}
