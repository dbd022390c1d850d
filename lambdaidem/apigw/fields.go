package apigw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lambdaidem/lambdaidem/internal/jsonname"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// KeyFunc returns a request's idempotency key, whether the request carries
// one, and an error if it is malformed; see Options.Key.
type KeyFunc func(ctx context.Context, r *Request) (key string, present bool, err error)

// KeyFromBodyField reads the key from a field of the JSON body, as Square's
// API does ({"idempotency_key": "…", …}). The path names the field with
// dots between object members ("meta.idempotency_key"); names match as
// encoding/json matches them (case-insensitively). A string is used as it
// is, a number as written. A body without the field (or with it null or
// empty) carries no key; a body that is not a JSON object, one that names
// the field twice, or a field of another type, is malformed. The body is
// read as a stream, never decoded whole. Options.MaxKeyLength applies.
func KeyFromBodyField(path string) KeyFunc {
	paths, steps := []string{path}, [][]string{strings.Split(path, ".")}
	return func(_ context.Context, r *Request) (string, bool, error) {
		if path == "" {
			return "", false, errors.New("apigw: KeyFromBodyField has an empty path")
		}
		fields, err := selectFields(r.Body, paths, steps)
		switch {
		case errors.Is(err, errAmbiguousField):
			return "", true, fmt.Errorf("the body names its %s field more than once", path)
		case err != nil:
			return "", true, fmt.Errorf("the body is not a JSON object, so it has no %s field", path)
		}
		var key string
		switch v := fields[path].(type) {
		case nil:
			return "", false, nil
		case string:
			key = v
		case json.Number:
			key = v.String()
		default:
			return "", true, fmt.Errorf("the body's %s field is not a string or a number", path)
		}
		return key, key != "", nil
	}
}

// FingerprintBodyFields makes the intent of a request the named fields of
// its JSON body (paths with dots between object members, as for
// [KeyFromBodyField]), so that a retry that changes only other fields (a
// client timestamp, a trace id) is the same request, while one that
// changes a named field is refused with 422. A field the body lacks counts
// as null. Numbers compare as written. Names match as encoding/json matches
// them to struct fields (case-insensitively), so a body that names a step
// of a path twice ({"amount": 1, "Amount": 2}), which a handler's decoder
// reads as its last, and a body above lambdaidem.MaxCanonicalJSON bytes
// (not decoded, to bound the work before the claim) are fingerprinted by
// their bytes: a retry must then resend them unchanged. A body that is not
// a JSON object is refused with 400, [ProblemMalformedRequest]. Use it as
// Options.Fingerprint.
func FingerprintBodyFields(paths ...string) func(context.Context, *Request) (any, error) {
	steps := make([][]string, len(paths))
	for i, p := range paths {
		steps[i] = strings.Split(p, ".")
	}
	return func(_ context.Context, r *Request) (any, error) {
		if len(r.Body) > lambdaidem.MaxCanonicalJSON {
			return map[string]string{"body-bytes": lambdaidem.FingerprintBytes(r.Body)}, nil
		}
		fields, err := selectFields(r.Body, paths, steps)
		switch {
		case errors.Is(err, errAmbiguousField):
			return map[string]string{"body-bytes": lambdaidem.FingerprintBytes(r.Body)}, nil
		case err != nil:
			return nil, httpengine.NewProblem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the request body is not a JSON object")
		}
		return fields, nil
	}
}

// errAmbiguousField: a body names a step of a chosen path more than once.
var errAmbiguousField = errors.New("apigw: a chosen field is named twice")

// selectFields returns the values at the paths of the JSON object body
// (nil where absent), decoding only those values. It fails on a body that
// is not one JSON object, and with errAmbiguousField when an object names
// a step of a path twice, as encoding/json matches names.
func selectFields(body []byte, paths []string, steps [][]string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	fields := make(map[string]any, len(paths))
	for _, p := range paths {
		fields[p] = nil
	}
	if err := selectIn(dec, steps, 0, func(i int, v any) { fields[paths[i]] = v }); err != nil {
		return nil, err
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errors.New("unterminated JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return fields, nil
}

// selectIn reads the members of an object whose '{' was read, at depth
// (the index of the path step its names match), and calls found with the
// value of every path that ends here.
func selectIn(dec *json.Decoder, steps [][]string, depth int, found func(path int, v any)) error {
	seen := map[string]bool{} // the steps matched in this object, folded
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var ends, descends []int
		for i, st := range steps {
			if depth < len(st) && jsonname.Match(name, st[depth]) {
				if depth == len(st)-1 {
					ends = append(ends, i)
				} else {
					descends = append(descends, i)
				}
			}
		}
		if len(ends)+len(descends) == 0 {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		folded := jsonname.Fold(name) // the rule the match above uses
		if seen[folded] {
			return errAmbiguousField
		}
		seen[folded] = true
		if len(ends) > 0 {
			var v any
			if err := dec.Decode(&v); err != nil {
				return err
			}
			for _, i := range ends {
				found(i, v)
			}
			continue // a path that ends here and one that goes deeper cannot share a value
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if raw = bytes.TrimLeft(raw, " \t\r\n"); len(raw) == 0 || raw[0] != '{' {
			continue // not an object: the deeper paths are absent
		}
		sub := json.NewDecoder(bytes.NewReader(raw))
		sub.UseNumber()
		if _, err := sub.Token(); err != nil { // '{'
			return err
		}
		deeper := make([][]string, len(steps))
		for _, i := range descends {
			deeper[i] = steps[i]
		}
		if err := selectIn(sub, deeper, depth+1, found); err != nil {
			return err
		}
	}
	return nil
}

// skipValue reads one value of any kind, without decoding it.
func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}
