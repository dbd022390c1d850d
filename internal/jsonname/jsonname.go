// Package jsonname holds the one rule by which the library matches JSON
// object names: as encoding/json matches a name to a struct field, equal
// under Unicode simple case folding. Canonicalization (a document naming a
// member twice under this rule is hashed as bytes) and every field selector
// (the apigw body-field key and fingerprint, the batch adapters' key
// helpers) use it, so that what the library reads as one name is what a
// handler's decoder reads as one name.
package jsonname

import (
	"unicode"
	"unicode/utf8"
)

// Fold maps every rune of s to the smallest rune of its simple case folding
// orbit, so that Fold(a) == Fold(b) exactly when strings.EqualFold(a, b),
// which is how encoding/json matches names: "k", "K" and the Kelvin sign
// U+212A are one name, as are "s", "S" and the long s U+017F, and "µ"
// (U+00B5), "μ" (U+03BC) and "Μ" (U+039C).
func Fold(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return string(b)
}

// Match reports whether a and b are one name under [Fold].
func Match(a, b string) bool { return Fold(a) == Fold(b) }
