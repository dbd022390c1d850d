package jsonname_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/internal/jsonname"
)

// Fold agrees with strings.EqualFold and with encoding/json's matching of
// a name to a struct field, on the runes whose folding orbits hold more
// than two members or cross scripts: the long s, the Kelvin sign, the
// micro sign, the dotless and dotted i.
func TestFoldIsEncodingJSONMatching(t *testing.T) {
	type fields struct {
		Status string `json:"status"`
		Kind   string `json:"kind"`
		Mu     string `json:"μ"`
		ID     string `json:"id"`
	}
	cases := []struct {
		name, field string
		match       bool
	}{
		{"\u017ftatus", "status", true}, // ſ: long s
		{"STATUS", "status", true},
		{"\u212aind", "kind", true}, // K: Kelvin sign
		{"\u00b5", "μ", true},       // µ: micro sign
		{"\u039c", "μ", true},       // Μ: capital mu
		{"\u0131d", "id", false},    // ı: dotless i folds with nothing
		{"\u0130d", "id", false},    // İ: dotted capital I folds with nothing
		{"kinds", "kind", false},
	}
	for _, c := range cases {
		if got := jsonname.Match(c.name, c.field); got != c.match {
			t.Errorf("Match(%q, %q) = %v; want %v", c.name, c.field, got, c.match)
		}
		if got := strings.EqualFold(c.name, c.field); got != c.match {
			t.Errorf("strings.EqualFold(%q, %q) = %v; the case is wrong", c.name, c.field, got)
		}
		var v fields
		doc, _ := json.Marshal(map[string]string{c.name: "x"})
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		decoded := v.Status+v.Kind+v.Mu+v.ID == "x"
		if decoded != c.match {
			t.Errorf("encoding/json matched %q to a field: %v; want %v", c.name, decoded, c.match)
		}
	}
}
