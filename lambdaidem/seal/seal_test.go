package seal_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// newKeyService is the test kit's stand-in for AWS KMS.
func newKeyService(testing.TB) *sealtest.KeyService { return sealtest.New() }

// failAll makes both calls of ks fail with err.
func failAll(ks *sealtest.KeyService, err error) {
	ks.Fail(sealtest.GenerateDataKey, err)
	ks.Fail(sealtest.Decrypt, err)
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
	if n := ks.Calls(sealtest.GenerateDataKey); n != 2 {
		t.Fatalf("%d GenerateDataKey calls for 100 outcomes at 50 uses a key; want 2", n)
	}
	openAll := func(s *seal.Sealer) {
		t.Helper()
		for i, b := range sealed {
			if _, err := s.Open(ctx, "ns#"+string(rune('a'+i%26)), b); err != nil {
				t.Fatal(err)
			}
		}
	}
	openAll(s)
	if n := ks.Calls(sealtest.Decrypt); n != 0 {
		t.Fatalf("%d Decrypt calls for outcomes this Sealer sealed; want 0", n)
	}
	now = now.Add(5 * time.Minute)
	if _, err := s.Seal(ctx, "ns#late", []byte("x")); err != nil || ks.Calls(sealtest.GenerateDataKey) != 3 {
		t.Fatalf("after MaxKeyAge: %v, %d generates; want a third key", err, ks.Calls(sealtest.GenerateDataKey))
	}
	// Past MaxCacheAge (by default MaxKeyAge) the cached keys are asked of
	// the key service again, once each: a revoked kms:Decrypt takes effect.
	openAll(s)
	openAll(s)
	if n := ks.Calls(sealtest.Decrypt); n != 2 {
		t.Fatalf("%d Decrypt calls after MaxCacheAge for 100 outcomes under 2 data keys; want 2", n)
	}
	cold := newSealer(t, ks)
	openAll(cold)
	if n := ks.Calls(sealtest.Decrypt); n != 4 {
		t.Fatalf("%d Decrypt calls for 100 outcomes under 2 data keys in a cold Sealer; want 2 more", n-2)
	}
}

// A warm process stops opening outcomes within MaxCacheAge of losing
// kms:Decrypt: the cache keeps a data key no longer than that, however
// recently it was used (an LRU alone would keep a busy key forever).
func TestOpenedKeysExpire(t *testing.T) {
	ctx := context.Background()
	ks := newKeyService(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	writer := newSealer(t, ks)
	b, err := writer.Seal(ctx, "ns#k", []byte("outcome"))
	if err != nil {
		t.Fatal(err)
	}
	s := newSealer(t, ks, func(o *seal.Options) {
		o.MaxKeyAge = time.Hour
		o.MaxCacheAge = time.Minute
		o.Now = func() time.Time { return now }
	})
	for range 5 {
		if _, err := s.Open(ctx, "ns#k", b); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
	}
	failAll(ks, errors.New("AccessDeniedException"))
	now = now.Add(11 * time.Second) // 61 s after the Decrypt
	if _, err := s.Open(ctx, "ns#k", b); err == nil {
		t.Fatal("opened an outcome past MaxCacheAge after kms:Decrypt was revoked")
	}
	if n := ks.Calls(sealtest.Decrypt); n != 2 {
		t.Fatalf("%d Decrypt calls; want one, then one past MaxCacheAge", n)
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
	failAll(ks, errors.New("AccessDeniedException"))
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
	if _, err := seal.New(newKeyService(t), func(o *seal.Options) { o.MaxCacheAge = -time.Second }); err == nil {
		t.Error("negative MaxCacheAge accepted")
	}
	// NIST SP 800-38D §8.3: at most 2^32 encryptions under one key with
	// random 96-bit nonces.
	if _, err := seal.New(newKeyService(t), func(o *seal.Options) { o.MaxKeyUses = 1<<32 + 1 }); err == nil || !strings.Contains(err.Error(), "2^32") {
		t.Errorf("MaxKeyUses 2^32+1: %v; want it refused, naming the bound", err)
	}
	if _, err := seal.New(newKeyService(t), func(o *seal.Options) { o.MaxKeyUses = 1 << 40 }); err == nil {
		t.Error("MaxKeyUses 2^40 accepted")
	}
	if _, err := seal.New(newKeyService(t), func(o *seal.Options) { o.MaxKeyUses = 1 << 32 }); err != nil {
		t.Errorf("MaxKeyUses 2^32 refused: %v", err)
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
	if n := ks.Calls(sealtest.GenerateDataKey); n != 1 {
		t.Fatalf("%d GenerateDataKey calls for 16 concurrent commits; want 1", n)
	}
}

// blockingKeys is a KeyService whose GenerateDataKey waits for release
// once armed: a KMS call that is slow (throttled and retried by the SDK).
type blockingKeys struct {
	*sealtest.KeyService
	armed   chan struct{} // closed: GenerateDataKey blocks
	entered chan struct{} // receives when a blocked call has begun
	release chan struct{}
}

func (k *blockingKeys) GenerateDataKey(ctx context.Context, ec map[string]string) ([]byte, []byte, error) {
	select {
	case <-k.armed:
		k.entered <- struct{}{}
		<-k.release
	default:
	}
	return k.KeyService.GenerateDataKey(ctx, ec)
}

// While one call generates a new data key (KMS slow), opening an outcome
// whose data key is cached, and comparing a fingerprint keyed under it,
// need no key service call and do not wait for it: a Managed Instance's
// replays do not stall behind one seal's GenerateDataKey.
func TestOpeningDoesNotWaitForANewDataKey(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	keys := &blockingKeys{KeyService: sealtest.New(), armed: make(chan struct{}), entered: make(chan struct{}), release: make(chan struct{})}
	s := newSealer(t, keys, func(o *seal.Options) {
		o.MaxKeyAge, o.MaxCacheAge, o.Now = time.Minute, time.Hour, clock
	})
	sealed, err := s.Seal(ctx, "ns#k", []byte("charged"))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := s.KeyFingerprint(ctx, "ns#k", "fp")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // the data key no longer seals; it still opens
	mu.Unlock()
	close(keys.armed)
	sealing := make(chan error)
	go func() {
		_, err := s.Seal(ctx, "ns#other", []byte("x"))
		sealing <- err
	}()
	<-keys.entered
	opened := make(chan error)
	go func() {
		_, err := s.Open(ctx, "ns#k", sealed)
		if err == nil {
			var same bool
			if same, err = s.SameFingerprint(ctx, "ns#k", fp, "fp"); err == nil && !same {
				err = errors.New("the fingerprint does not match")
			}
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a liveness bound, not a speed target
		close(keys.release)
		t.Fatal("Open waited for another call's GenerateDataKey")
	}
	close(keys.release)
	if err := <-sealing; err != nil {
		t.Fatal(err)
	}
}
