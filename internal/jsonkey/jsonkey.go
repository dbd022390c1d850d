// Package jsonkey reads an idempotency key from a field of a JSON
// document, for the batch adapters' key helpers (a message body, a record's
// data).
package jsonkey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lambdaidem/lambdaidem/internal/jsonname"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Field returns the field of doc that path names, with dots between object
// members ("order.id"); names containing dots cannot be addressed. Names
// match as encoding/json matches them to struct fields ([jsonname.Fold]);
// an object naming a step twice that way makes the key invalid. A string
// is returned as it is, a number as written. Anything else, an absent or
// empty field, or a doc that is not a single JSON value fails with an error
// matching [lambdaidem.ErrMissingKey] or [lambdaidem.ErrInvalidKey]; what
// names the document in those errors ("the body", "the data"). The errors
// never quote the document or the key.
func Field(doc []byte, path, what string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: the JSON field's path is empty", lambdaidem.ErrInvalidKey)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", fmt.Errorf("%w: %s is not JSON, so it has no field %q", lambdaidem.ErrInvalidKey, what, path)
	}
	for _, step := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%w: no field %q in %s: a parent is not an object", lambdaidem.ErrMissingKey, path, what)
		}
		var n int
		if v, n = member(obj, step); n == 0 {
			return "", fmt.Errorf("%w: no field %q in %s", lambdaidem.ErrMissingKey, path, what)
		} else if n > 1 {
			return "", fmt.Errorf("%w: %s names field %q more than once", lambdaidem.ErrInvalidKey, what, path)
		}
	}
	switch k := v.(type) {
	case string:
		if k == "" {
			return "", fmt.Errorf("%w: field %q is empty", lambdaidem.ErrMissingKey, path)
		}
		return k, nil
	case json.Number:
		return k.String(), nil
	case nil:
		return "", fmt.Errorf("%w: field %q is null", lambdaidem.ErrMissingKey, path)
	}
	return "", fmt.Errorf("%w: field %q is a %s, not a string or a number", lambdaidem.ErrInvalidKey, path, kind(v))
}

// member returns the value of obj's member that name matches, as
// encoding/json matches names ([jsonname.Fold]), and how many members
// match: more than one makes the key ambiguous (a handler's decoder reads
// the last, which a decoded map no longer tells).
func member(obj map[string]any, name string) (any, int) {
	if len(obj) == 0 {
		return nil, 0
	}
	want := jsonname.Fold(name)
	var v any
	n := 0
	for k, kv := range obj {
		if jsonname.Fold(k) == want {
			v, n = kv, n+1
		}
	}
	return v, n
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case bool:
		return "boolean"
	}
	return "value"
}
