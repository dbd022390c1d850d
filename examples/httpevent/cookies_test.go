package httpevent_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"
)

// The cookies field keeps the order the client sent: with two cookies of
// one name (different paths), the first is the one a server uses.
func TestCookiesKeepTheirOrder(t *testing.T) {
	routes, _ := httpevent.NewRoutes("$default")
	r := httptest.NewRequest("GET", "http://127.0.0.1/x", nil)
	r.Header.Set("Cookie", "session=specific; session=general; a=1")
	e, err := (&httpevent.Translator{Routes: routes}).Event(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Cookies, "; "); got != "session=specific; session=general; a=1" {
		t.Errorf("cookies = %q", got)
	}
}
