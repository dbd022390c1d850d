package lambdaidem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lambdaidem/lambdaidem/internal/jsonname"
)

// MaxCanonicalJSON is the size in bytes up to which [FingerprintJSON]
// canonicalizes a document. A larger one is hashed as its bytes, without
// being decoded: canonicalizing decodes the whole document into a tree,
// which costs tens of times its size in memory, before any claim is made.
// 64 KiB covers any ordinary API request; a client that retries sends the
// same bytes anyway.
const MaxCanonicalJSON = 64 << 10

// errDuplicateName marks a document whose objects hold a name twice, as
// encoding/json matches names.
var errDuplicateName = errors.New("duplicate object name")

// canonicalJSON re-encodes doc with sorted object keys and no insignificant
// white space. Numbers are kept as written. It returns errDuplicateName for
// a document with a duplicate name (see [checkNames]).
func canonicalJSON(doc []byte) ([]byte, error) {
	if err := checkNames(doc); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkNames walks doc's tokens and returns errDuplicateName if one object
// holds two names that encoding/json would match to one struct field:
// equal, or equal under Unicode simple case folding (so "k", "K" and the
// Kelvin sign U+212A are one name): the rule of [jsonname.Fold], which
// every field selector uses too. It returns a syntax error for a
// document that does not parse, and nil otherwise.
func checkNames(doc []byte) error {
	type frame struct {
		object   bool
		wantName bool
		names    map[string]bool
	}
	var stack []frame
	// valueDone records that a value ended: in an object, a name comes next.
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].wantName {
			top := &stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			name, _ := tok.(string) // the decoder yields only strings here
			folded := jsonname.Fold(name)
			if top.names[folded] {
				return errDuplicateName
			}
			top.names[folded] = true
			top.wantName = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantName: true, names: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
