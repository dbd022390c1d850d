// Package jsonkey reads an idempotency key from a field of a JSON
// document, for the batch adapters' key helpers (a message body, a record's
// data).
package jsonkey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Field returns the field of doc that path names, with dots between object
// members ("order.id"); names containing dots cannot be addressed. A string
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
		if v, ok = obj[step]; !ok {
			return "", fmt.Errorf("%w: no field %q in %s", lambdaidem.ErrMissingKey, path, what)
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
