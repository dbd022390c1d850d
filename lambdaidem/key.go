package lambdaidem

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// RecordKey derives the record key of an operation: the namespace, '#', and
// the SHA-256 (base64url) of the scope, the operation name and the caller's
// idempotency key. Each part is length-prefixed, so no choice of parts can
// collide with another. The raw key is not recoverable from the result.
//
// Where Lambda names a tenant, the record key is [TenantRecordKey]'s.
func RecordKey(namespace, scope, operation, key string) string {
	return namespace + "#" + hashParts(scope, operation, key)
}

// hashParts is the SHA-256 (base64url) of the parts, each length-prefixed.
func hashParts(parts ...string) string {
	h := sha256.New()
	for _, part := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// operationKey derives the stable key an attempt hands to downstream APIs:
// the same for every attempt at one operation, unrelated to the record key
// by anything a downstream party can invert.
func operationKey(recordKey string) string {
	sum := sha256.Sum256([]byte("lambdaidem/operation\x00" + recordKey))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// checkKey validates a caller's idempotency key.
func checkKey(key string, max int) error {
	switch {
	case key == "":
		return ErrMissingKey
	case len(key) > max:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidKey, len(key), max)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	}
	return nil
}

// Fingerprint hashes the JSON encoding of v with SHA-256 (base64url). The
// encoding of a Go value is already canonical: struct fields in declaration
// order, map keys sorted, no white space; so two events that differ only in
// the key order or spacing of their JSON give the same fingerprint. A
// json.RawMessage is canonicalized first, as by [FingerprintJSON]; raw JSON
// nested inside v is hashed as written.
func Fingerprint(v any) (string, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return FingerprintJSON(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("lambdaidem: fingerprint: %w", err)
	}
	return FingerprintBytes(b), nil
}

// FingerprintJSON is [Fingerprint] of a JSON document given as bytes: two
// documents that differ only in key order, white space or string escapes
// share a fingerprint. It returns an error if doc is not one JSON value.
//
// Two documents that encoding/json decodes into different values never
// share a fingerprint. So a document it cannot canonicalize faithfully is
// hashed as its bytes, as by [FingerprintBytes]:
//
//   - one whose objects hold a name twice, exactly or as encoding/json
//     matches names (case-insensitively, "Currency" and "currency"): the
//     decoder keeps the last value (even a null, which it then ignores),
//     while a canonical form would keep either both or the wrong one;
//   - one larger than [MaxCanonicalJSON] bytes: it is streamed through
//     SHA-256 without being decoded (nor validated), so that the work done
//     before a claim stays bounded whatever a client sends.
//
// Bytes and canonical forms cannot collide into a wrong match: a canonical
// form never holds a duplicate name, and a document whose bytes equal
// another's canonical form decodes to the same value.
func FingerprintJSON(doc []byte) (string, error) {
	if len(doc) > MaxCanonicalJSON {
		return FingerprintBytes(doc), nil
	}
	canon, err := canonicalJSON(doc)
	if errors.Is(err, errDuplicateName) {
		return FingerprintBytes(doc), nil
	}
	if err != nil {
		return "", fmt.Errorf("lambdaidem: fingerprint: %w", err)
	}
	return FingerprintBytes(canon), nil
}

// FingerprintBytes hashes bytes as they are, for payloads that are not JSON.
func FingerprintBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
