package httpengine

import (
	"fmt"
	"net/http"
	"strings"
)

// keyOf returns the idempotency key of r, whether the header is present at
// all, and an error if it is malformed.
//
// A key is 1 to MaxKeyLength characters of visible ASCII ('!' to '~'),
// except '"', ',' and '\'. It may be sent bare or as a structured-field
// string ("…" in double quotes), as the IETF draft writes it; both spell the
// same key. Spaces and tabs around it are ignored, as around any field
// value; any other white space (a Unicode space, a CR) makes it malformed. A request with the header more than once (which an HTTP API
// event shows as values joined by commas) is malformed: the key would be
// ambiguous.
func keyOf(h http.Header, name string, max int) (key string, present bool, err error) {
	values := h.Values(name)
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", true, fmt.Errorf("the %s header appears %d times", name, len(values))
	}
	key = strings.Trim(values[0], " \t") // optional white space (RFC 9110 §5.6.3): SP and HTAB only
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	switch {
	case key == "":
		return "", true, fmt.Errorf("the %s header is empty", name)
	case len(key) > max:
		return "", true, fmt.Errorf("the %s header is %d bytes long; the limit is %d", name, len(key), max)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < '!' || c > '~' || c == '"' || c == ',' || c == '\\' {
			return "", true, fmt.Errorf("the %s header may hold only visible ASCII characters other than '\"', ',' and '\\'", name)
		}
	}
	return key, true, nil
}

// safeMethod reports whether m is safe (RFC 9110 §9.2.1): it has no effect
// to deduplicate, so a key on such a request is ignored.
func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
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
