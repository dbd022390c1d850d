package lambdaidem_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

func sealedGuard(t *testing.T, store lambdaidem.Store, keys seal.KeyService, sealOpts func(*seal.Options), optFns ...func(*lambdaidem.Options)) *lambdaidem.Guard {
	t.Helper()
	if sealOpts == nil {
		sealOpts = func(*seal.Options) {}
	}
	sealer, err := seal.New(keys, sealOpts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store, append([]func(*lambdaidem.Options){func(o *lambdaidem.Options) { o.Sealer = sealer }}, optFns...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A handler that returns after its invocation's deadline (Lambda Managed
// Instances do not stop it) has its outcome sealed and committed: sealing
// runs on the finish context, as the commit does, so a cold Sealer's
// GenerateDataKey does not fail with the invocation's "context deadline
// exceeded". After BeginExternal, the record is COMPLETED, not UNKNOWN; a
// duplicate past its own deadline, in a cold process, opens it.
func TestSealingAndOpeningOutliveTheDeadline(t *testing.T) {
	for _, external := range []bool{false, true} {
		keys := sealtest.New() // fails every call on a context that is done, as an SDK call does
		store := memstore.New()
		expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		c := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1", Fingerprint: "fp"}
		runs := 0
		fn := func(ctx context.Context) (string, error) {
			runs++
			if external {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil {
					return "", err
				}
			}
			return "charged", nil
		}
		out, err := lambdaidem.Do(expired, sealedGuard(t, store, keys, nil), c, fn)
		if err != nil || out != "charged" {
			t.Fatalf("external=%v: Do past the deadline = %q, %v; want the outcome committed", external, out, err)
		}
		for _, r := range store.Records() {
			if r.Status != lambdaidem.StatusCompleted {
				t.Fatalf("external=%v: record %s; want COMPLETED", external, r.Status)
			}
		}
		out, err = lambdaidem.Do(expired, sealedGuard(t, store, keys, nil), c, fn)
		if err != nil || out != "charged" || runs != 1 {
			t.Fatalf("external=%v: cold duplicate past its deadline = %q, %v after %d runs; want the replay", external, out, err, runs)
		}
	}
}

// commitRecorder records the outcome bytes of every Commit; its first
// Commit meets a record in the way that has expired, so the optimistic
// commit goes round again.
type commitRecorder struct {
	*memstore.Store
	mu       sync.Mutex
	outcomes [][]byte
}

func (s *commitRecorder) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	s.mu.Lock()
	s.outcomes = append(s.outcomes, bytes.Clone(c.Outcome))
	first := len(s.outcomes) == 1
	s.mu.Unlock()
	if first {
		return lambdaidem.Record{Key: c.Key, Status: lambdaidem.StatusInProgress, ExpiresAt: c.Now.Add(-time.Minute)}, false, nil
	}
	return s.Store.Commit(ctx, c)
}

// An outcome is sealed once per attempt: every commit of it carries the
// same bytes (a seal draws a fresh nonce, so a second seal would differ,
// and a lost commit could not be recognized as this attempt's own).
func TestOutcomeIsSealedOncePerAttempt(t *testing.T) {
	store := &commitRecorder{Store: memstore.New()}
	g := sealedGuard(t, store, sealtest.New(), nil, func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic })
	c := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1", Fingerprint: "fp"}
	if out, err := lambdaidem.Do(context.Background(), g, c, func(context.Context) (string, error) { return "charged", nil }); err != nil || out != "charged" {
		t.Fatalf("Do = %q, %v", out, err)
	}
	if len(store.outcomes) != 2 {
		t.Fatalf("%d commits; want 2", len(store.outcomes))
	}
	if !bytes.Equal(store.outcomes[0], store.outcomes[1]) {
		t.Fatal("the second commit of one attempt carried other sealed bytes: the outcome was sealed again")
	}
}

// A stored outcome whose key the key service cannot open is its own
// condition: throttling matches ErrKeyUnavailable (the outcome is stored,
// a retry replays it), a refusal ErrKeyRefused with the key and the action
// named. The handler does not run again and the record stays.
func TestOpeningFailureIsAKeyServiceCondition(t *testing.T) {
	cases := []struct {
		fail error
		want error
	}{
		{sealtest.Throttled("kms:Decrypt"), lambdaidem.ErrKeyUnavailable},
		{sealtest.Denied("kms:Decrypt"), lambdaidem.ErrKeyRefused},
		{errors.New("connection reset"), lambdaidem.ErrKeyUnavailable}, // unclassified: for now
	}
	for _, c := range cases {
		keys := sealtest.New()
		store := memstore.New()
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		// One process; its cached data key lapses (MaxCacheAge) before the
		// duplicate, so opening asks the key service again.
		g := sealedGuard(t, store, keys, func(o *seal.Options) {
			o.MaxKeyAge, o.MaxCacheAge = time.Hour, time.Minute
			o.Now = func() time.Time { return now }
		})
		call := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1", Fingerprint: "fp"}
		runs := 0
		fn := func(context.Context) (string, error) { runs++; return "charged", nil }
		if _, err := lambdaidem.Do(context.Background(), g, call, fn); err != nil {
			t.Fatal(err)
		}
		now = now.Add(2 * time.Minute)
		keys.Fail(sealtest.Decrypt, c.fail)
		_, err := lambdaidem.Do(context.Background(), g, call, fn)
		var kse *lambdaidem.KeyServiceError
		if !errors.Is(err, c.want) || !errors.As(err, &kse) || kse.Action == "" {
			t.Fatalf("fail %v: Do = %v; want %v wrapping a KeyServiceError", c.fail, err, c.want)
		}
		other := lambdaidem.ErrKeyRefused
		if c.want == other {
			other = lambdaidem.ErrKeyUnavailable
		}
		if errors.Is(err, other) || errors.Is(err, lambdaidem.ErrStoreUnavailable) {
			t.Fatalf("Do = %v matches %v too", err, other)
		}
		keys.Fail(sealtest.Decrypt, nil)
		if out, err := lambdaidem.Do(context.Background(), g, call, fn); err != nil || out != "charged" || runs != 1 {
			t.Fatalf("once the key service answers: %q, %v after %d runs; want the replay", out, err, runs)
		}
	}
}

// Keyed fingerprints. The attacker holds the table, the code, the key's
// name and the encryption context, but not kms:Decrypt: guessing a
// low-entropy request (an amount in 0..999) against the stored validation
// teaches nothing, and two records of one request do not show it.
func TestStoredFingerprintRevealsNothingWithoutTheKey(t *testing.T) {
	type refund struct {
		Amount int `json:"amount"`
	}
	keys := sealtest.New()
	store := memstore.New()
	g := sealedGuard(t, store, keys, nil)
	fp := func(v any) string {
		s, err := lambdaidem.Fingerprint(v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, key := range []string{"r-1", "r-2"} { // one request, two keys
		c := lambdaidem.Call[string]{Operation: "Refund", Key: key, Fingerprint: fp(refund{Amount: 437})}
		if _, err := lambdaidem.Do(context.Background(), g, c, func(context.Context) (string, error) { return "ok", nil }); err != nil {
			t.Fatal(err)
		}
	}
	var stored []lambdaidem.Record
	for _, r := range store.Records() {
		stored = append(stored, r)
	}
	if stored[0].Fingerprint == stored[1].Fingerprint || len(stored[0].Fingerprint) < 43 {
		t.Fatalf("validations %q, %q: two records of one request must not match", stored[0].Fingerprint, stored[1].Fingerprint)
	}
	// The attacker's Sealer: the code and the encryption context, a key
	// service without the master key (no kms:Decrypt on it).
	attacker, err := seal.New(sealtest.New())
	if err != nil {
		t.Fatal(err)
	}
	for amount := range 1000 {
		guess := fp(refund{Amount: amount})
		for _, r := range stored {
			if strings.Contains(r.Fingerprint, guess) || bytes.Contains(r.Outcome, []byte(guess)) {
				t.Fatalf("the record shows the plain fingerprint of amount %d", amount)
			}
			if same, err := attacker.SameFingerprint(context.Background(), r.Key, r.Fingerprint, guess); err == nil || same {
				t.Fatalf("amount %d: an attacker without kms:Decrypt compared the guess: %v, %v", amount, same, err)
			}
		}
	}
	// Whoever holds kms:Decrypt tells them apart, in any process.
	holder, _ := seal.New(keys)
	for amount, want := range map[int]bool{437: true, 436: false} {
		if same, err := holder.SameFingerprint(context.Background(), stored[0].Key, stored[0].Fingerprint, fp(refund{Amount: amount})); err != nil || same != want {
			t.Fatalf("amount %d: SameFingerprint = %v, %v; want %v", amount, same, err, want)
		}
	}
}

// The stored fingerprint names its key: a retry that reaches another
// process (another data key) or comes after the key rotated (MaxKeyAge)
// replays instead of being refused as a reused key; a different request
// is still refused.
func TestKeyedFingerprintSurvivesRotation(t *testing.T) {
	keys := sealtest.New()
	store := memstore.New()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *seal.Options) { o.Now = func() time.Time { return now } }
	writer := sealedGuard(t, store, keys, clock)
	call := lambdaidem.Call[string]{Operation: "Refund", Key: "r-1", Fingerprint: "fp-437"}
	runs := 0
	fn := func(context.Context) (string, error) { runs++; return "refunded", nil }
	if _, err := lambdaidem.Do(context.Background(), writer, call, fn); err != nil {
		t.Fatal(err)
	}
	now = now.Add(6 * time.Minute) // past MaxKeyAge: the writer keys with a new data key now
	other := sealedGuard(t, store, keys, nil)
	for name, g := range map[string]*lambdaidem.Guard{"rotated": writer, "another process": other} {
		if out, err := lambdaidem.Do(context.Background(), g, call, fn); err != nil || out != "refunded" || runs != 1 {
			t.Fatalf("%s: retry = %q, %v after %d runs; want the replay", name, out, err, runs)
		}
		changed := call
		changed.Fingerprint = "fp-436"
		if _, err := lambdaidem.Do(context.Background(), g, changed, fn); !errors.Is(err, lambdaidem.ErrKeyReused) {
			t.Fatalf("%s: a different request = %v; want ErrKeyReused", name, err)
		}
	}
	if n := keys.Calls(sealtest.GenerateDataKey); n != 3 {
		t.Errorf("%d GenerateDataKey calls; want one a process and one for the rotation", n)
	}
}

// Records written before fingerprints were keyed (the plain fingerprint,
// a sealed outcome) keep working: written here as that code wrote them, a
// duplicate replays and a different request is refused.
func TestUnkeyedFingerprintsOfEarlierRecordsStillMatch(t *testing.T) {
	keys := sealtest.New()
	store := memstore.New()
	sealer, err := seal.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := lambdaidem.Call[string]{Operation: "Refund", Key: "r-1", Fingerprint: "fp-437"}
	key := lambdaidem.RecordKey(g.Options().Namespace, call.Scope, call.Operation, call.Key)
	now := time.Now()
	if _, ok, err := store.Claim(ctx, lambdaidem.Claim{Key: key, Token: "t1", Fingerprint: call.Fingerprint, Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)}); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	plain, err := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"refunded"`)})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sealer.Seal(ctx, key, plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Commit(ctx, lambdaidem.Commit{Key: key, Token: "t1", Fingerprint: call.Fingerprint, Outcome: sealed, Now: now, ExpiresAt: now.Add(time.Hour), Attempts: 1, CreatedAt: now}); err != nil || !ok {
		t.Fatalf("commit: %v %v", ok, err)
	}
	fn := func(context.Context) (string, error) { t.Fatal("the handler ran"); return "", nil }
	if out, err := lambdaidem.Do(ctx, g, call, fn); err != nil || out != "refunded" {
		t.Fatalf("duplicate of an earlier record = %q, %v; want the replay", out, err)
	}
	changed := call
	changed.Fingerprint = "fp-436"
	if _, err := lambdaidem.Do(ctx, g, changed, fn); !errors.Is(err, lambdaidem.ErrKeyReused) {
		t.Fatalf("a different request = %v; want ErrKeyReused", err)
	}
}

// A duplicate in another process (its own data key) meets a record still
// in progress, whose keyed fingerprint it must compare, while the key
// service throttles or refuses Decrypt: it gets the key service condition
// (503 / 500 at the HTTP adapters), and what it logs says the record could
// not be read, not that an outcome is stored: there is none yet.
func TestComparingAFingerprintOfARecordInProgressIsNotAStoredOutcome(t *testing.T) {
	for _, c := range []struct {
		fail error
		want error
	}{
		{sealtest.Throttled("kms:Decrypt"), lambdaidem.ErrKeyUnavailable},
		{sealtest.Denied("kms:Decrypt"), lambdaidem.ErrKeyRefused},
	} {
		keys := sealtest.New()
		store := memstore.New()
		owner := sealedGuard(t, store, keys, nil)
		var logs bytes.Buffer
		other := sealedGuard(t, store, keys, nil, func(o *lambdaidem.Options) {
			o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
		call := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1", Fingerprint: "fp"}
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan error)
		go func() {
			_, err := lambdaidem.Do(context.Background(), owner, call, func(context.Context) (string, error) {
				close(started)
				<-release
				return "charged", nil
			})
			done <- err
		}()
		<-started
		keys.Fail(sealtest.Decrypt, c.fail)
		_, err := lambdaidem.Do(context.Background(), other, call, func(context.Context) (string, error) {
			t.Fatal("ran while the owner runs")
			return "", nil
		})
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !errors.Is(err, c.want) {
			t.Fatalf("fail %v: the duplicate got %v; want %v", c.fail, err, c.want)
		}
		for _, text := range []string{err.Error(), logs.String()} {
			if strings.Contains(text, "stored outcome") || !strings.Contains(text, "fingerprint") {
				t.Fatalf("fail %v: %q speaks of a stored outcome, or not of the fingerprint it could not compare", c.fail, text)
			}
		}
	}
}

// A key service unavailable for a moment when the outcome is sealed (KMS
// throttling GenerateDataKey when a cold Sealer, or one past MaxKeyAge,
// needs a data key) does not lose a known outcome: the seal is asked again,
// with backoff, until FinishTimeout, and after BeginExternal the record is
// COMPLETED, not UNKNOWN for a reconciler. A refusal is not retried: the
// record is UNKNOWN at once and the error names the key service.
func TestSealRetriesAKeyServiceUnavailableForNow(t *testing.T) {
	cases := []struct {
		name      string
		fail      error
		times     int
		want      lambdaidem.Status
		wantCalls int
	}{
		{"throttled three times", sealtest.Throttled("kms:GenerateDataKey"), 3, lambdaidem.StatusCompleted, 4},
		{"denied", sealtest.Denied("kms:GenerateDataKey"), 3, lambdaidem.StatusUnknown, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys := sealtest.New()
			store := memstore.New()
			g := sealedGuard(t, store, keys, nil)
			var before int
			// No fingerprint, so nothing is keyed before the claim: the
			// first data key this cold Sealer needs is the outcome's.
			call := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1"}
			out, err := lambdaidem.Do(context.Background(), g, call, func(ctx context.Context) (string, error) {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil {
					return "", err
				}
				before = keys.Calls(sealtest.GenerateDataKey)
				keys.FailNext(sealtest.GenerateDataKey, c.times, c.fail)
				return "charged", nil
			})
			var got []lambdaidem.Status
			for _, r := range store.Records() {
				got = append(got, r.Status)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Fatalf("records %v after Do = %q, %v; want one %s", got, out, err, c.want)
			}
			if calls := keys.Calls(sealtest.GenerateDataKey) - before; calls != c.wantCalls {
				t.Errorf("GenerateDataKey called %d times while sealing; want %d", calls, c.wantCalls)
			}
			switch c.want {
			case lambdaidem.StatusCompleted:
				if err != nil || out != "charged" {
					t.Errorf("Do = %q, %v; want the outcome", out, err)
				}
			default:
				if !strings.Contains(fmt.Sprint(err), "kms:GenerateDataKey") {
					t.Errorf("Do error %v; want it to name the refused key service call", err)
				}
			}
		})
	}
}
