package lambdaidem

import (
	"bytes"
	"context"
	"strings"
)

// Codec encodes a handler's result for storage and decodes it for a
// replay; see Options.Codec. Marshal gets the result; Unmarshal gets a
// pointer to a zero result to fill in. The functions of encoding/json, of
// encoding/gob's wrappers, and of most serialization libraries fit with a
// one-line adapter. It must be safe for concurrent use.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// Sealer protects stored outcomes, for example by encrypting them; see
// Options.Sealer. Seal runs on every outcome before it is stored and Open
// on every stored outcome before it is decoded, each with the record key.
// A Sealer should bind what it seals to the key (as authenticated data), so
// that bytes copied from one record into another do not open. It must be
// safe for concurrent use.
type Sealer interface {
	Seal(ctx context.Context, key string, plaintext []byte) ([]byte, error)
	Open(ctx context.Context, key string, sealed []byte) ([]byte, error)
}

// FingerprintKeyer is implemented by a Sealer that also keys the stored
// fingerprints (the seal package's Sealer does): the table then holds a
// keyed hash of each request's fingerprint, which a reader without the key
// cannot test guesses against. The core calls it for every Call with a
// fingerprint: KeyFingerprint once per call (it must cost no key service
// call once warm), SameFingerprint when a stored fingerprint differs from
// the call's keyed one.
type FingerprintKeyer interface {
	// KeyFingerprint returns the stored form of fingerprint for the record
	// key. The form names the secret it was keyed with.
	KeyFingerprint(ctx context.Context, key, fingerprint string) (string, error)
	// SameFingerprint reports whether stored, a stored fingerprint of the
	// record key, is fingerprint's: keyed by KeyFingerprint in any process
	// and under any secret it names, or, for records written before
	// fingerprints were keyed, the plain fingerprint itself.
	SameFingerprint(ctx context.Context, key, stored, fingerprint string) (bool, error)
}

// The forms lambdaidem/seal stores, which a Guard without a Sealer must
// recognize rather than take for a plain outcome or another request's
// fingerprint: a sealed outcome starts with its magic, a keyed fingerprint
// with its prefix (neither can start a plain outcome, which is JSON or
// gzip, nor an unkeyed fingerprint, which is base64url). The seal package's
// tests check that they agree.
const (
	sealedOutcomeMagic     = "LIS1"
	keyedFingerprintPrefix = "lisf1."
)

// sealedRecord reports whether rec holds a sealed outcome or a keyed
// fingerprint.
func sealedRecord(rec Record) bool {
	return strings.HasPrefix(rec.Fingerprint, keyedFingerprintPrefix) || bytes.HasPrefix(rec.Outcome, []byte(sealedOutcomeMagic))
}
