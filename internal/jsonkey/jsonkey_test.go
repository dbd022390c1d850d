package jsonkey_test

import (
	"errors"
	"testing"

	"github.com/lambdaidem/lambdaidem/internal/jsonkey"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The key helpers match names by the folding rule canonicalization and the
// apigw selectors use: a name a handler's decoder matches is the key's
// name, and a body naming it twice that way is refused rather than read as
// one of the two (the decoder reads the last).
func TestFieldFoldsNamesAsEncodingJSON(t *testing.T) {
	cases := []struct {
		doc, path, want string
		err             error
	}{
		{`{"order":{"id":"o-1"}}`, "order.id", "o-1", nil},
		{`{"Order":{"ID":"o-1"}}`, "order.id", "o-1", nil},
		{"{\"\u017ftep\":\"s-1\"}", "step", "s-1", nil},                             // long s
		{"{\"\u212aey\":\"k-1\"}", "key", "k-1", nil},                               // Kelvin sign
		{"{\"\u00b5\":\"m-1\"}", "\u03bc", "m-1", nil},                              // micro sign
		{`{"id":"a","ID":"b"}`, "id", "", lambdaidem.ErrInvalidKey},                 // twice, folded
		{"{\"key\":\"a\",\"\u212aey\":\"b\"}", "key", "", lambdaidem.ErrInvalidKey}, // twice, Kelvin
		{"{\"order\":{\"\u017fku\":1,\"sku\":2}}", "order.sku", "", lambdaidem.ErrInvalidKey},
		{`{"id":"a","id":"b"}`, "id", "b", nil}, // an exact repeat: the decoder's last, as before
		{`{"ids":"a"}`, "id", "", lambdaidem.ErrMissingKey},
	}
	for _, c := range cases {
		got, err := jsonkey.Field([]byte(c.doc), c.path, "the body")
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("Field(%s, %q) = %q, %v; want %v", c.doc, c.path, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Field(%s, %q) = %q, %v; want %q", c.doc, c.path, got, err, c.want)
		}
	}
}
