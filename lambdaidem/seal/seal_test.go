package seal_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// keyService is an in-process stand-in for AWS KMS's GenerateDataKey and
// Decrypt: data keys are wrapped with AES-GCM under a master key that
// never leaves it, with the encryption context as authenticated data, so
// Decrypt fails on another context, as KMS does ("If you specified an
// encryption context to encrypt the data, you must specify the same
// encryption context to decrypt it", AWS KMS Developer Guide, Encryption
// context). It counts its calls.
type keyService struct {
	master             cipher.AEAD
	generates, decrypt atomic.Int64
	fail               error
}

func newKeyService(t testing.TB) *keyService {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	return &keyService{master: aead}
}

func contextAAD(ec map[string]string) []byte {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		b.WriteString(k + "\x00" + ec[k] + "\x00")
	}
	return b.Bytes()
}

func (k *keyService) GenerateDataKey(_ context.Context, ec map[string]string) ([]byte, []byte, error) {
	k.generates.Add(1)
	if k.fail != nil {
		return nil, nil, k.fail
	}
	plain := make([]byte, 32)
	_, _ = rand.Read(plain)
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	return plain, k.master.Seal(nonce, nonce, plain, contextAAD(ec)), nil
}

func (k *keyService) Decrypt(_ context.Context, blob []byte, ec map[string]string) ([]byte, error) {
	k.decrypt.Add(1)
	if k.fail != nil {
		return nil, k.fail
	}
	if len(blob) < 12 {
		return nil, errors.New("InvalidCiphertextException")
	}
	plain, err := k.master.Open(nil, blob[:12], blob[12:], contextAAD(ec))
	if err != nil {
		return nil, errors.New("InvalidCiphertextException")
	}
	return plain, nil
}

func newSealer(t testing.TB, keys seal.KeyService, optFns ...func(*seal.Options)) *seal.Sealer {
	t.Helper()
	s, err := seal.New(keys, optFns...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpensUnderItsRecordKeyOnly(t *testing.T) {
	ctx := context.Background()
	s := newSealer(t, newKeyService(t))
	plain := []byte(`{"value":{"card":"4242 4242 4242 4242","email":"ada@example.com"}}`)
	sealed, err := s.Seal(ctx, "ns#key-1", plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("4242")) || bytes.Contains(sealed, []byte("ada@")) {
		t.Fatalf("sealed outcome holds plaintext: %q", sealed)
	}
	if got, err := s.Open(ctx, "ns#key-1", sealed); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v; want the plaintext", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	cases := []struct {
		name   string
		key    string
		sealed []byte
		want   error
	}{
		{"another record", "ns#key-2", sealed, seal.ErrAuthentication},
		{"a flipped bit", "ns#key-1", tampered, seal.ErrAuthentication},
		{"not sealed", "ns#key-1", plain, seal.ErrMalformed},
		{"truncated", "ns#key-1", sealed[:10], seal.ErrMalformed},
		{"empty", "ns#key-1", nil, seal.ErrMalformed},
	}
	for _, c := range cases {
		if got, err := s.Open(ctx, c.key, c.sealed); !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: Open = %q, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// One data key serves many outcomes: one GenerateDataKey per MaxKeyAge or
// MaxKeyUses, and no Decrypt for outcomes this process sealed; a cold
// process decrypts each data key once.
func TestDataKeysAreCached(t *testing.T) {
	ctx := context.Background()
	ks := newKeyService(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := newSealer(t, ks, func(o *seal.Options) { o.MaxKeyUses = 50; o.Now = func() time.Time { return now } })
	var sealed [][]byte
	for i := range 100 {
		b, err := s.Seal(ctx, "ns#"+string(rune('a'+i%26)), []byte("outcome"))
		if err != nil {
			t.Fatal(err)
		}
		sealed = append(sealed, b)
	}
	if n := ks.generates.Load(); n != 2 {
		t.Fatalf("%d GenerateDataKey calls for 100 outcomes at 50 uses a key; want 2", n)
	}
	now = now.Add(5 * time.Minute)
	if _, err := s.Seal(ctx, "ns#late", []byte("x")); err != nil || ks.generates.Load() != 3 {
		t.Fatalf("after MaxKeyAge: %v, %d generates; want a third key", err, ks.generates.Load())
	}
	for i, b := range sealed {
		if _, err := s.Open(ctx, "ns#"+string(rune('a'+i%26)), b); err != nil {
			t.Fatal(err)
		}
	}
	if n := ks.decrypt.Load(); n != 0 {
		t.Fatalf("%d Decrypt calls for outcomes this Sealer sealed; want 0", n)
	}
	cold := newSealer(t, ks)
	for i, b := range sealed {
		if _, err := cold.Open(ctx, "ns#"+string(rune('a'+i%26)), b); err != nil {
			t.Fatal(err)
		}
	}
	if n := ks.decrypt.Load(); n != 2 {
		t.Fatalf("%d Decrypt calls for 100 outcomes under 2 data keys in a cold Sealer; want 2", n)
	}
}

// The encryption context is checked by the key service: a Sealer with
// another context cannot open the outcome.
func TestEncryptionContextIsChecked(t *testing.T) {
	ctx := context.Background()
	ks := newKeyService(t)
	a := newSealer(t, ks, func(o *seal.Options) { o.EncryptionContext = map[string]string{"table": "payments-idempotency"} })
	b := newSealer(t, ks, func(o *seal.Options) { o.EncryptionContext = map[string]string{"table": "orders-idempotency"} })
	sealed, err := a.Seal(ctx, "ns#k", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, "ns#k", sealed); err == nil || !strings.Contains(err.Error(), "InvalidCiphertext") {
		t.Fatalf("Open under another encryption context = %v; want the key service's refusal", err)
	}
}

func TestKeyServiceFailureFailsTheSeal(t *testing.T) {
	ks := newKeyService(t)
	ks.fail = errors.New("AccessDeniedException")
	s := newSealer(t, ks)
	if _, err := s.Seal(context.Background(), "ns#k", []byte("x")); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("Seal = %v; want the key service's error", err)
	}
}

func TestNewRefusesInvalidOptions(t *testing.T) {
	if _, err := seal.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := seal.New(newKeyService(t), func(o *seal.Options) { o.MaxKeyUses = -1 }); err == nil {
		t.Error("negative MaxKeyUses accepted")
	}
}

// Under a Guard: the table holds ciphertext, duplicates replay the value,
// and concurrent seals share one data key.
func TestGuardWithSealer(t *testing.T) {
	ks := newKeyService(t)
	store := memstore.New()
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = newSealer(t, ks) })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := lambdaidem.Call[string]{Operation: "Refund", Key: "r-" + string(rune('a'+i)), Fingerprint: "fp"}
			for range 2 {
				out, err := lambdaidem.Do(context.Background(), g, c, func(context.Context) (string, error) { return "refunded to ada@example.com", nil })
				if err != nil || out != "refunded to ada@example.com" {
					t.Errorf("Do = %q, %v", out, err)
				}
			}
		}()
	}
	wg.Wait()
	for _, r := range store.Records() {
		if bytes.Contains(r.Outcome, []byte("ada@")) {
			t.Fatalf("record %s holds the plain outcome %q", r.Key, r.Outcome)
		}
	}
	if n := ks.generates.Load(); n != 1 {
		t.Fatalf("%d GenerateDataKey calls for 16 concurrent commits; want 1", n)
	}
}
