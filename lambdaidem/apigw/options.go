package apigw

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
)

// Options configure an [Adapter]. The zero value of every field means its
// documented default.
type Options struct {
	// Header names the request header that carries the idempotency key,
	// matched case-insensitively. Default "Idempotency-Key".
	Header string

	// RequireKey lists the methods whose requests must carry a key; such a
	// request without one is refused with 400. Requests of other methods
	// without a key pass straight through to the handler, with no store call.
	// Default: POST and PATCH.
	RequireKey []string

	// MaxKeyLength caps the key's length in bytes; a longer key is refused
	// with 400. Default 255. The Guard's own Options.MaxKeySize applies too.
	MaxKeyLength int

	// Scope returns the principal a request acts for. Records of different
	// scopes never meet. The adapter adds the method and route to it.
	// Default: Request.Principal, the authenticated caller the event names
	// (see [Request]). Return a [*Problem] to refuse the request with it.
	Scope func(context.Context, *Request) (string, error)

	// Parts chooses which parts of a request define its intent: a duplicate
	// whose parts differ from the first request's is refused with 422.
	// Default [AllParts].
	Parts Parts

	// Store reports whether a response with this status is a decided outcome
	// of the operation, to store and replay to every duplicate. A response it
	// rejects is returned once and not stored, and the claim is released, so
	// that the client may fix the request and reuse the key. Default
	// [DecidedStatus].
	Store func(status int) bool

	// OmitHeaders names response headers, besides those listed at
	// [Adapter], that are neither stored nor replayed.
	OmitHeaders []string
}

// Parts is a set of request parts that make up a fingerprint.
type Parts uint8

// The request parts a fingerprint can cover.
const (
	PartMethod Parts = 1 << iota
	PartRoute
	PartPathParameters
	PartQuery
	PartBody

	// AllParts is every part: method, route, path parameters, query and body.
	AllParts = PartMethod | PartRoute | PartPathParameters | PartQuery | PartBody
)

// defaultScope is the authenticated principal the event names.
func defaultScope(_ context.Context, r *Request) (string, error) { return r.Principal, nil }

func (o *Options) setDefaults() error {
	if o.Header == "" {
		o.Header = "Idempotency-Key"
	}
	if !validToken(o.Header) {
		return fmt.Errorf("apigw: Header %q is not a valid header name", o.Header)
	}
	o.Header = textproto.CanonicalMIMEHeaderKey(o.Header)
	if o.RequireKey == nil {
		o.RequireKey = []string{"POST", "PATCH"}
	}
	for i, m := range o.RequireKey {
		if !validToken(m) {
			return fmt.Errorf("apigw: RequireKey[%d] %q is not a method", i, m)
		}
		o.RequireKey[i] = strings.ToUpper(m)
	}
	switch {
	case o.MaxKeyLength < 0:
		return fmt.Errorf("apigw: MaxKeyLength must not be negative, got %d", o.MaxKeyLength)
	case o.MaxKeyLength == 0:
		o.MaxKeyLength = 255
	}
	if o.Scope == nil {
		o.Scope = defaultScope
	}
	if o.Parts == 0 {
		o.Parts = AllParts
	}
	if o.Parts&^AllParts != 0 {
		return errors.New("apigw: Parts has unknown bits")
	}
	if o.Store == nil {
		o.Store = DecidedStatus
	}
	return nil
}

// validToken reports whether s is an HTTP token (RFC 9110 §5.6.2), the
// syntax of header names and methods.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
