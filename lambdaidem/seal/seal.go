package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// KeyService issues data keys under a master key and decrypts them: the
// GenerateDataKey and Decrypt calls of AWS KMS (see the kmsseal module),
// or any service with the same contract. It must be safe for concurrent
// use. Its errors should be a [*lambdaidem.KeyServiceError] saying whether
// they are permanent (access denied, key disabled or deleted); the Sealer
// wraps any other error in one that is not. The sealtest package has one
// for tests.
type KeyService interface {
	// GenerateDataKey returns a fresh 256-bit data key, in plain and as
	// encrypted under the master key with the encryption context.
	GenerateDataKey(ctx context.Context, encryptionContext map[string]string) (plaintext, encrypted []byte, err error)
	// Decrypt returns the plain data key of an encrypted one; it fails if
	// the encryption context differs from the one it was generated with.
	Decrypt(ctx context.Context, encrypted []byte, encryptionContext map[string]string) (plaintext []byte, err error)
}

// Conditions a caller tests with [errors.Is].
var (
	// ErrMalformed: the bytes are not an outcome sealed by this package.
	ErrMalformed = errors.New("seal: malformed sealed outcome")
	// ErrAuthentication: the outcome does not open under its record key: it
	// was altered, or sealed for another record.
	ErrAuthentication = errors.New("seal: outcome failed authentication")
)

// Options configure a [Sealer]. The zero value of every field means its
// documented default.
type Options struct {
	// EncryptionContext is the key service's encryption context of every
	// data key: non-secret, logged by CloudTrail, checked on Decrypt, and
	// usable in key policy conditions (kms:EncryptionContext:...). Default
	// {"purpose": "lambdaidem-outcome"}.
	EncryptionContext map[string]string

	// MaxKeyAge is how long one data key encrypts new outcomes. Default 5m.
	MaxKeyAge time.Duration

	// MaxKeyUses is how many outcomes one data key encrypts, at most 2^32
	// (NIST SP 800-38D bounds a key to 2^32 encryptions with random 96-bit
	// nonces). Default 100,000.
	MaxKeyUses int

	// CacheSize bounds how many decrypted data keys are kept for opening
	// outcomes and fingerprints. Default 64.
	CacheSize int

	// MaxCacheAge is how long a data key, once generated or decrypted, is
	// kept for opening outcomes and fingerprints; after it the next open
	// asks the key service again, so a revoked kms:Decrypt takes effect in
	// a warm process within this time. Default MaxKeyAge.
	MaxCacheAge time.Duration

	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Sealer is a [lambdaidem.Sealer] doing envelope encryption; see the
// package documentation. It is safe for concurrent use.
type Sealer struct {
	keys KeyService
	opts Options

	// generating is held while a new data key is asked for: concurrent
	// seals wait for one new key rather than each asking for its own, while
	// opening, which needs only mu, goes on.
	generating sync.Mutex

	mu      sync.Mutex
	current *dataKey          // encrypts new outcomes, keys new fingerprints
	opened  map[string]cached // encrypted data key → decrypted, for Open
}

type dataKey struct {
	aead      cipher.AEAD
	mac       []byte // the fingerprint key derived from it
	named     string // fingerprintPrefix, the encrypted key in base64url, "."
	encrypted []byte
	born      time.Time
	uses      int
}

type cached struct {
	aead cipher.AEAD
	mac  []byte
	born time.Time // generated or decrypted
	used time.Time
}

const (
	magic     = "LIS1"
	nonceSize = 12
	aadPrefix = "lambdaidem/seal v1\x00"

	// fingerprintPrefix starts a keyed fingerprint:
	// "lisf1." base64url(encrypted data key) "." base64url(HMAC-SHA256).
	fingerprintPrefix = "lisf1."
	// macLabel derives a data key's fingerprint key, HMAC-SHA256(data key,
	// macLabel), so that the key that MACs is never the key that encrypts.
	macLabel = "lambdaidem/seal fingerprint key v1"
	// maxKeyUses is NIST SP 800-38D's bound on random 96-bit nonces.
	maxKeyUses = 1 << 32
)

// New returns a Sealer over keys. It returns an error if keys is nil or an
// option is invalid.
func New(keys KeyService, optFns ...func(*Options)) (*Sealer, error) {
	if keys == nil {
		return nil, errors.New("seal: nil KeyService")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	switch {
	case o.MaxKeyAge < 0, o.MaxKeyUses < 0, o.CacheSize < 0, o.MaxCacheAge < 0:
		return nil, errors.New("seal: MaxKeyAge, MaxKeyUses, CacheSize and MaxCacheAge must not be negative")
	case uint64(o.MaxKeyUses) > maxKeyUses:
		return nil, fmt.Errorf("seal: MaxKeyUses is %d; one data key may seal at most 2^32 outcomes (random 96-bit nonces, NIST SP 800-38D)", o.MaxKeyUses)
	}
	if o.EncryptionContext == nil {
		o.EncryptionContext = map[string]string{"purpose": "lambdaidem-outcome"}
	}
	o.EncryptionContext = maps.Clone(o.EncryptionContext)
	if o.MaxKeyAge == 0 {
		o.MaxKeyAge = 5 * time.Minute
	}
	if o.MaxKeyUses == 0 {
		o.MaxKeyUses = 100_000
	}
	if o.CacheSize == 0 {
		o.CacheSize = 64
	}
	if o.MaxCacheAge == 0 {
		o.MaxCacheAge = o.MaxKeyAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sealer{keys: keys, opts: o, opened: map[string]cached{}}, nil
}

// Seal encrypts plaintext for the record key under the current data key,
// generating one (one GenerateDataKey call) when there is none or it is
// too old or too used.
func (s *Sealer) Seal(ctx context.Context, key string, plaintext []byte) ([]byte, error) {
	dk, err := s.dataKey(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(magic)+2+len(dk.encrypted)+nonceSize+len(plaintext)+dk.aead.Overhead())
	out = append(out, magic...)
	out = binary.BigEndian.AppendUint16(out, uint16(len(dk.encrypted)))
	out = append(out, dk.encrypted...)
	nonce := make([]byte, nonceSize)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	out = append(out, nonce...)
	return dk.aead.Seal(out, nonce, plaintext, aad(key)), nil
}

// Open decrypts an outcome sealed for the record key. Its data key comes
// from the cache, or from one Decrypt call.
func (s *Sealer) Open(ctx context.Context, key string, sealed []byte) ([]byte, error) {
	rest, ok := cutPrefix(sealed, magic)
	if !ok || len(rest) < 2 {
		return nil, ErrMalformed
	}
	n := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if n == 0 || len(rest) < n+nonceSize {
		return nil, ErrMalformed
	}
	encrypted, nonce, ciphertext := rest[:n], rest[n:n+nonceSize], rest[n+nonceSize:]
	aead, err := s.opener(ctx, encrypted)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, nonce, ciphertext, aad(key))
	if err != nil {
		return nil, ErrAuthentication
	}
	return plain, nil
}

// IsSealed reports whether b has the form of an outcome sealed by this
// package (it may still not open), for tools that must not take sealed
// bytes for a plain outcome.
func IsSealed(b []byte) bool {
	rest, ok := cutPrefix(b, magic)
	return ok && len(rest) >= 2
}

// IsKeyedFingerprint reports whether a stored fingerprint was keyed by a
// Sealer of this package ([Sealer.KeyFingerprint]): its record belongs to
// a Guard that seals outcomes.
func IsKeyedFingerprint(s string) bool { return strings.HasPrefix(s, fingerprintPrefix) }

// KeyFingerprint returns the stored form of a request fingerprint for the
// record key: HMAC-SHA256 of both under a key derived from a data key the
// key service issued, with that data key, encrypted, in front. It
// implements [lambdaidem.FingerprintKeyer]: a table reader without
// kms:Decrypt cannot test a guess of the request against it, and two
// records of equal requests do not show it. The data key is the one that
// seals outcomes: generated once per Options.MaxKeyAge or MaxKeyUses
// outcomes (one GenerateDataKey call), not per request.
func (s *Sealer) KeyFingerprint(ctx context.Context, key, fingerprint string) (string, error) {
	dk, err := s.fingerprintKey(ctx)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	mac := fingerprintMAC(dk.mac, key, fingerprint)
	out := make([]byte, 0, len(dk.named)+enc.EncodedLen(len(mac)))
	return string(enc.AppendEncode(append(out, dk.named...), mac)), nil
}

// SameFingerprint reports whether stored, a record key's stored
// fingerprint, is fingerprint's: keyed by KeyFingerprint under any data
// key this key service opens (one Decrypt call for a key not cached: one
// of another process, or from before a rotation), or stored unkeyed by an
// earlier version of the library (then compared as it is). A keyed
// fingerprint whose data key the key service refuses fails with its
// error.
func (s *Sealer) SameFingerprint(ctx context.Context, key, stored, fingerprint string) (bool, error) {
	rest, ok := strings.CutPrefix(stored, fingerprintPrefix)
	if !ok {
		return stored == fingerprint, nil
	}
	blob, mac, ok := strings.Cut(rest, ".")
	enc := base64.RawURLEncoding
	encrypted, err1 := enc.DecodeString(blob)
	sum, err2 := enc.DecodeString(mac)
	if !ok || err1 != nil || err2 != nil || len(encrypted) == 0 {
		return false, nil // not a fingerprint of this package: not this request's
	}
	c, err := s.open(ctx, encrypted)
	if err != nil {
		return false, err
	}
	return hmac.Equal(sum, fingerprintMAC(c.mac, key, fingerprint)), nil
}

func fingerprintMAC(macKey []byte, key, fingerprint string) []byte {
	m := hmac.New(sha256.New, macKey)
	m.Write([]byte(aadPrefix + "fingerprint\x00"))
	m.Write(binary.BigEndian.AppendUint64(nil, uint64(len(key))))
	m.Write([]byte(key))
	m.Write([]byte(fingerprint))
	return m.Sum(nil)
}

// dataKey returns the key for a new outcome, counting the use.
func (s *Sealer) dataKey(ctx context.Context) (*dataKey, error) {
	return s.fresh(ctx, &s.current, true)
}

// fingerprintKey returns the data key that keys new fingerprints: the one
// that seals new outcomes (its fingerprint key is derived, never the
// encryption key itself), without counting a use: a MAC uses no nonce.
func (s *Sealer) fingerprintKey(ctx context.Context) (*dataKey, error) {
	return s.fresh(ctx, &s.current, false)
}

// fresh returns *slot, or a new data key in it once it is too old or (for
// sealing, count) too used.
func (s *Sealer) fresh(ctx context.Context, slot **dataKey, count bool) (*dataKey, error) {
	if dk, ok := s.usable(slot, count); ok {
		return dk, nil
	}
	s.generating.Lock()
	defer s.generating.Unlock()
	if dk, ok := s.usable(slot, count); ok {
		return dk, nil // another call generated one meanwhile
	}
	now := s.opts.Now()
	plain, encrypted, err := s.keys.GenerateDataKey(ctx, maps.Clone(s.opts.EncryptionContext))
	if err != nil {
		return nil, fmt.Errorf("seal: generate data key: %w", keyServiceError("GenerateDataKey", err))
	}
	c, err := newCached(plain, now)
	if err != nil {
		return nil, err
	}
	if len(encrypted) == 0 || len(encrypted) > 0xffff {
		return nil, fmt.Errorf("seal: generate data key: encrypted key of %d bytes", len(encrypted))
	}
	named := fingerprintPrefix + base64.RawURLEncoding.EncodeToString(encrypted) + "."
	dk := &dataKey{aead: c.aead, mac: c.mac, named: named, encrypted: encrypted, born: now, uses: 1}
	s.mu.Lock()
	defer s.mu.Unlock()
	*slot = dk
	s.remember(string(encrypted), c)
	return dk, nil
}

// usable returns *slot if it may still seal (counting the use) or key.
func (s *Sealer) usable(slot **dataKey, count bool) (*dataKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dk := *slot
	if dk == nil || dk.uses >= s.opts.MaxKeyUses || s.opts.Now().Sub(dk.born) >= s.opts.MaxKeyAge {
		return nil, false
	}
	if count {
		dk.uses++
	}
	return dk, true
}

// opener returns the AEAD of an encrypted data key.
func (s *Sealer) opener(ctx context.Context, encrypted []byte) (cipher.AEAD, error) {
	c, err := s.open(ctx, encrypted)
	return c.aead, err
}

// open returns the decrypted data key of an encrypted one: from the cache
// if it was generated or decrypted less than Options.MaxCacheAge ago, else
// from one Decrypt call.
func (s *Sealer) open(ctx context.Context, encrypted []byte) (cached, error) {
	s.mu.Lock()
	now := s.opts.Now()
	c, ok := s.opened[string(encrypted)]
	switch {
	case ok && now.Sub(c.born) >= s.opts.MaxCacheAge:
		delete(s.opened, string(encrypted))
		ok = false
	case ok:
		c.used = now
		s.opened[string(encrypted)] = c
	}
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	plain, err := s.keys.Decrypt(ctx, encrypted, maps.Clone(s.opts.EncryptionContext))
	if err != nil {
		return cached{}, fmt.Errorf("seal: decrypt data key: %w", keyServiceError("Decrypt", err))
	}
	c, err = newCached(plain, s.opts.Now())
	if err != nil {
		return cached{}, err
	}
	s.mu.Lock()
	s.remember(string(encrypted), c)
	s.mu.Unlock()
	return c, nil
}

// keyServiceError is err as a [*lambdaidem.KeyServiceError]: as it is if
// it is one, else one that is not permanent (an unclassified failure, a
// context that ended) for the call op.
func keyServiceError(op string, err error) error {
	var kse *lambdaidem.KeyServiceError
	if errors.As(err, &kse) {
		return err
	}
	return &lambdaidem.KeyServiceError{Key: "(the key service's master key)", Action: op, Err: err}
}

// remember caches a data key, evicting the least recently used one when
// the cache is full. The caller holds s.mu.
func (s *Sealer) remember(encrypted string, c cached) {
	if _, ok := s.opened[encrypted]; !ok && len(s.opened) >= s.opts.CacheSize {
		var oldest string
		var at time.Time
		for k, c := range s.opened {
			if oldest == "" || c.used.Before(at) {
				oldest, at = k, c.used
			}
		}
		delete(s.opened, oldest)
	}
	s.opened[encrypted] = c
}

// newCached returns the cache entry of a plain data key.
func newCached(plain []byte, now time.Time) (cached, error) {
	aead, err := newAEAD(plain)
	if err != nil {
		return cached{}, err
	}
	m := hmac.New(sha256.New, plain)
	m.Write([]byte(macLabel))
	return cached{aead: aead, mac: m.Sum(nil), born: now, used: now}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("seal: data key of %d bytes; want 32 (AES-256)", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return cipher.NewGCM(block)
}

// aad is the authenticated data of an outcome of the record key.
func aad(key string) []byte { return []byte(aadPrefix + key) }

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}
