// Package sealtest provides a [seal.KeyService] for tests: an in-process
// stand-in for AWS KMS's GenerateDataKey and Decrypt, so that a test of a
// sealed Guard needs neither KMS nor a fake of its own.
//
// Data keys are wrapped with AES-256-GCM under a master key that never
// leaves the KeyService, with the encryption context as authenticated
// data, so Decrypt fails on another context as KMS does ("If you specified
// an encryption context to encrypt the data, you must specify the same
// encryption context to decrypt it", AWS KMS Developer Guide, Encryption
// context). Like an SDK call, a call on a context that is done fails with
// the context's error. Calls are counted, and a test makes either call
// fail with [KeyService.Fail], for instance with [Throttled] or [Denied].
package sealtest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// The operations of a KeyService, as [KeyService.Calls] and
// [KeyService.Fail] name them.
const (
	GenerateDataKey = "GenerateDataKey"
	Decrypt         = "Decrypt"
)

// KeyID is the name a KeyService gives its master key in errors.
const KeyID = "sealtest-master-key"

// KeyService is a seal.KeyService under one master key. It is safe for
// concurrent use.
type KeyService struct {
	master cipher.AEAD

	mu    sync.Mutex
	calls map[string]int
	fails map[string]error
	next  map[string][]error // FailNext: the errors of the next calls, in order
}

var _ seal.KeyService = (*KeyService)(nil)

// New returns a KeyService under a fresh random master key: data keys of
// one KeyService do not open under another.
func New() *KeyService {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	return &KeyService{master: aead, calls: map[string]int{}, fails: map[string]error{}, next: map[string][]error{}}
}

// Calls returns how many times op (GenerateDataKey or Decrypt) was called,
// failed calls included.
func (k *KeyService) Calls(op string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls[op]
}

// Fail makes every later call of op (GenerateDataKey or Decrypt) fail with
// err, until Fail(op, nil).
func (k *KeyService) Fail(op string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fails[op] = err
}

// FailNext makes the next n calls of op (GenerateDataKey or Decrypt) fail
// with err, before any error Fail set; later calls succeed again (or fail
// as Fail says).
func (k *KeyService) FailNext(op string, n int, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for range n {
		k.next[op] = append(k.next[op], err)
	}
}

// Throttled is the error of a key service that is throttling its caller
// (KMS's ThrottlingException): retrying later will succeed.
func Throttled(action string) error {
	return &lambdaidem.KeyServiceError{Key: KeyID, Action: action, Err: errors.New("ThrottlingException: rate exceeded")}
}

// Denied is the error of a key service that refuses its caller the key
// (KMS's AccessDeniedException): retrying will not help.
func Denied(action string) error {
	return &lambdaidem.KeyServiceError{Key: KeyID, Action: action, Permanent: true, Err: errors.New("AccessDeniedException: not authorized")}
}

// begin counts a call of op and returns the error it must fail with.
func (k *KeyService) begin(ctx context.Context, op string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls[op]++
	if err := ctx.Err(); err != nil {
		return &lambdaidem.KeyServiceError{Key: KeyID, Action: "kms:" + op, Err: err}
	}
	if next := k.next[op]; len(next) > 0 {
		k.next[op] = next[1:]
		return next[0]
	}
	return k.fails[op]
}

// GenerateDataKey returns a fresh 256-bit data key, plain and wrapped
// under the master key with the encryption context.
func (k *KeyService) GenerateDataKey(ctx context.Context, ec map[string]string) ([]byte, []byte, error) {
	if err := k.begin(ctx, GenerateDataKey); err != nil {
		return nil, nil, err
	}
	plain := make([]byte, 32)
	_, _ = rand.Read(plain)
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	return plain, k.master.Seal(nonce, nonce, plain, contextAAD(ec)), nil
}

// Decrypt unwraps a data key; it fails, as a permanent refusal, on a key
// wrapped under another master key or another encryption context.
func (k *KeyService) Decrypt(ctx context.Context, encrypted []byte, ec map[string]string) ([]byte, error) {
	if err := k.begin(ctx, Decrypt); err != nil {
		return nil, err
	}
	invalid := &lambdaidem.KeyServiceError{Key: KeyID, Action: "kms:Decrypt", Permanent: true, Err: errors.New("InvalidCiphertextException")}
	if len(encrypted) < 12 {
		return nil, invalid
	}
	plain, err := k.master.Open(nil, encrypted[:12], encrypted[12:], contextAAD(ec))
	if err != nil {
		return nil, invalid
	}
	return plain, nil
}

func contextAAD(ec map[string]string) []byte {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		b.WriteString(k + "\x00" + ec[k] + "\x00")
	}
	return b.Bytes()
}
