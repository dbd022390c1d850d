package powertools_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// FuzzKeyAndData: no input panics; a key does not depend on the
// selection's white space; what EncodeData stores, DecodeData reads back
// as a value that stores the same again (but for Java's bare strings).
func FuzzKeyAndData(f *testing.F) {
	for _, seed := range []string{`"order-1"`, `{"b":1,"a":[1.5e300,null,"\u00e9"]}`, `{"10":1,"2":2,"__proto__":3}`, `-0.0`, `1e400`, `[[[]]]`, `{"a":1,"a":2}`, `"\ud800"`} {
		f.Add([]byte(seed))
	}
	langs := []powertools.Language{powertools.Python, powertools.TypeScript, powertools.Java, powertools.DotNet}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var spaced bytes.Buffer
		indentable := json.Indent(&spaced, doc, "", "  ") == nil
		for _, lang := range langs {
			cfg := powertools.Config{Language: lang, FunctionName: "f", Handler: "h"}
			k1, err1 := cfg.Key(json.RawMessage(doc))
			if lang != powertools.DotNet && indentable {
				k2, err2 := cfg.Key(json.RawMessage(spaced.Bytes()))
				if (err1 == nil) != (err2 == nil) || k1 != k2 {
					t.Errorf("%s: key %q (%v) compact, %q (%v) indented", lang, k1, err1, k2, err2)
				}
			}
			_, _ = cfg.ValidationHash(json.RawMessage(doc))
			_, _ = cfg.DecodeData(json.RawMessage(doc))
			attr, err := cfg.EncodeData(json.RawMessage(doc))
			if err != nil || lang == powertools.Java {
				// Java stores a string result as its bare text, which reads
				// back as JSON when it looks like JSON (" 0"): no round trip.
				continue
			}
			back, err := cfg.DecodeData(attr)
			if err != nil {
				t.Fatalf("%s: DecodeData(EncodeData(%s) = %s): %v", lang, doc, attr, err)
			}
			again, err := cfg.EncodeData(back)
			if err != nil || !bytes.Equal(again, attr) {
				t.Errorf("%s: stored %s, read back %s, stored again %s (%v)", lang, attr, back, again, err)
			}
		}
	})
}
