package httpengine

import "testing"

// An issuer and a subject never join into another pair's principal, even
// when one of them holds the separator.
func TestJWTPrincipalIsUnambiguous(t *testing.T) {
	a := jwtPrincipal("https://idp.example|x", "y")
	b := jwtPrincipal("https://idp.example", "x|y")
	if a == b {
		t.Fatalf("issuer %q/subject %q and issuer %q/subject %q share principal %q", "https://idp.example|x", "y", "https://idp.example", "x|y", a)
	}
	if jwtPrincipal("https://idp.example", "") != "" {
		t.Fatal("a token without a subject has a principal")
	}
}
