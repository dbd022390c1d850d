package apigw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lambdaidem/lambdaidem/internal/jsonkey"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// KeyFunc returns a request's idempotency key, whether the request carries
// one, and an error if it is malformed; see Options.Key.
type KeyFunc func(ctx context.Context, r *Request) (key string, present bool, err error)

// KeyFromBodyField reads the key from a field of the JSON body, as Square's
// API does ({"idempotency_key": "…", …}). The path names the field with
// dots between object members ("meta.idempotency_key"). A string is used as
// it is, a number as written. A body without the field (or with it null or
// empty) carries no key; a body that is not JSON, or a field of another
// type, is malformed. Options.MaxKeyLength applies.
func KeyFromBodyField(path string) KeyFunc {
	return func(_ context.Context, r *Request) (string, bool, error) {
		if path == "" {
			return "", false, errors.New("apigw: KeyFromBodyField has an empty path")
		}
		key, err := jsonkey.Field(r.Body, path, "the body")
		switch {
		case errors.Is(err, lambdaidem.ErrMissingKey):
			return "", false, nil
		case err != nil:
			return "", true, errors.New(strings.TrimPrefix(err.Error(), lambdaidem.ErrInvalidKey.Error()+": "))
		case len(key) > 255:
			return "", true, fmt.Errorf("the body's %s field is %d bytes long; the limit is 255", path, len(key))
		}
		return key, true, nil
	}
}

// FingerprintBodyFields makes the intent of a request the named fields of
// its JSON body (paths with dots between object members, as for
// [KeyFromBodyField]), so that a retry that changes only other fields (a
// client timestamp, a trace id) is the same request, while one that
// changes a named field is refused with 422. A field the body lacks counts
// as null. Numbers compare as written. A body that is not a JSON object is
// refused with 400, [ProblemMalformedRequest]. Use it as
// Options.Fingerprint.
func FingerprintBodyFields(paths ...string) func(context.Context, *Request) (any, error) {
	return func(_ context.Context, r *Request) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil || dec.More() {
			return nil, problem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the request body is not JSON")
		}
		if _, ok := doc.(map[string]any); !ok {
			return nil, problem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the request body is not a JSON object")
		}
		fields := make(map[string]any, len(paths))
		for _, path := range paths {
			fields[path] = lookup(doc, path)
		}
		return fields, nil
	}
}

// lookup returns the value at path in doc, or nil.
func lookup(doc any, path string) any {
	v := doc
	for _, step := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = obj[step]; !ok {
			return nil
		}
	}
	return v
}

// fingerprint is the fingerprint of r: of Options.Fingerprint's value, or
// of the Parts.
func (a *Adapter) fingerprint(ctx context.Context, r *Request) (string, error) {
	if a.opts.Fingerprint == nil {
		return fingerprint(r, a.opts.Parts)
	}
	v, err := a.opts.Fingerprint(ctx, r)
	if err != nil {
		return "", err
	}
	return lambdaidem.Fingerprint(v)
}
