package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"
)

// KeyService issues data keys under a master key and decrypts them: the
// GenerateDataKey and Decrypt calls of AWS KMS (see the kmsseal module),
// or any service with the same contract. It must be safe for concurrent
// use.
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

	// MaxKeyUses is how many outcomes one data key encrypts. Default 100,000.
	MaxKeyUses int

	// CacheSize bounds how many decrypted data keys are kept for opening
	// outcomes. Default 64.
	CacheSize int

	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Sealer is a [lambdaidem.Sealer] doing envelope encryption; see the
// package documentation. It is safe for concurrent use.
type Sealer struct {
	keys KeyService
	opts Options

	mu      sync.Mutex
	current *dataKey          // encrypts new outcomes
	opened  map[string]cached // encrypted data key → decrypted, for Open
}

type dataKey struct {
	aead      cipher.AEAD
	encrypted []byte
	born      time.Time
	uses      int
}

type cached struct {
	aead cipher.AEAD
	used time.Time
}

const (
	magic     = "LIS1"
	nonceSize = 12
	aadPrefix = "lambdaidem/seal v1\x00"
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
	case o.MaxKeyAge < 0, o.MaxKeyUses < 0, o.CacheSize < 0:
		return nil, errors.New("seal: MaxKeyAge, MaxKeyUses and CacheSize must not be negative")
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

// dataKey returns the key for a new outcome, counting the use.
func (s *Sealer) dataKey(ctx context.Context) (*dataKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if dk := s.current; dk != nil && dk.uses < s.opts.MaxKeyUses && now.Sub(dk.born) < s.opts.MaxKeyAge {
		dk.uses++
		return dk, nil
	}
	// Held under the lock: concurrent seals wait for one new key rather
	// than each asking the key service for its own.
	plain, encrypted, err := s.keys.GenerateDataKey(ctx, maps.Clone(s.opts.EncryptionContext))
	if err != nil {
		return nil, fmt.Errorf("seal: generate data key: %w", err)
	}
	aead, err := newAEAD(plain)
	if err != nil {
		return nil, err
	}
	if len(encrypted) == 0 || len(encrypted) > 0xffff {
		return nil, fmt.Errorf("seal: generate data key: encrypted key of %d bytes", len(encrypted))
	}
	s.current = &dataKey{aead: aead, encrypted: encrypted, born: now, uses: 1}
	s.remember(string(encrypted), aead, now)
	return s.current, nil
}

// opener returns the AEAD of an encrypted data key.
func (s *Sealer) opener(ctx context.Context, encrypted []byte) (cipher.AEAD, error) {
	s.mu.Lock()
	c, ok := s.opened[string(encrypted)]
	if ok {
		c.used = s.opts.Now()
		s.opened[string(encrypted)] = c
	}
	s.mu.Unlock()
	if ok {
		return c.aead, nil
	}
	plain, err := s.keys.Decrypt(ctx, encrypted, maps.Clone(s.opts.EncryptionContext))
	if err != nil {
		return nil, fmt.Errorf("seal: decrypt data key: %w", err)
	}
	aead, err := newAEAD(plain)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.remember(string(encrypted), aead, s.opts.Now())
	s.mu.Unlock()
	return aead, nil
}

// remember caches a decrypted data key, evicting the least recently used
// one when the cache is full. The caller holds s.mu.
func (s *Sealer) remember(encrypted string, aead cipher.AEAD, now time.Time) {
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
	s.opened[encrypted] = cached{aead: aead, used: now}
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
