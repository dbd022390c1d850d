package kmsseal_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

const (
	keyARN  = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	key2ARN = "arn:aws:kms:eu-west-1:111122223333:key/0987dcba-09fe-87dc-65ba-ab0987654321"
	alias   = "alias/outcomes"
)

// kmsStandIn serves KMS's DescribeKey, GenerateDataKey and Decrypt over
// the AWS JSON 1.1 protocol the SDK speaks (X-Amz-Target:
// TrentService.<Operation>; blobs base64 in JSON; errors as {"__type":
// ...} with HTTP 400, or 500 for KMS's internal errors), after the AWS KMS
// API Reference. Each key wraps data keys under a master key that never
// leaves it, with the encryption context as authenticated data; the
// ciphertext names its key, as KMS's symmetric ciphertext carries its key
// in metadata. KeyId may be a key id, key ARN, alias name or alias ARN.
// As KMS does: "If you specify a KeyId value, the Decrypt operation
// succeeds only if the specified KMS key was used to encrypt the
// ciphertext" (Decrypt, KeyId), else IncorrectKeyException; another
// encryption context is InvalidCiphertextException. An alias can be
// pointed at another key (UpdateAlias, as a manual rotation does).
type kmsStandIn struct {
	mu      sync.Mutex
	keys    map[string]cipher.AEAD // key ARN → master key
	order   []string               // key ARNs, by index in the ciphertext
	aliases map[string]string      // alias name → key ARN
	calls   map[string]int
	keyIDs  map[string][]string // operation → KeyId of every request
	fail    map[string]string   // operation → error code to answer with
	answer  string              // if set, the KeyId every answer names
	off     map[string]bool     // key ARN → disabled (DisableKey)
}

func newKMS(t *testing.T) (*kmsStandIn, *kms.Client) {
	t.Helper()
	s := &kmsStandIn{keys: map[string]cipher.AEAD{}, aliases: map[string]string{alias: keyARN},
		calls: map[string]int{}, keyIDs: map[string][]string{}, fail: map[string]string{}, off: map[string]bool{}}
	s.addKey(keyARN)
	s.addKey(key2ARN)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	client := kms.New(kms.Options{
		Region:           "eu-west-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      aws.AnonymousCredentials{},
		RetryMaxAttempts: 1, // the stand-in's faults reach the adapter as they are
	})
	return s, client
}

func (s *kmsStandIn) addKey(arn string) {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	s.keys[arn] = aead
	s.order = append(s.order, arn)
}

func (s *kmsStandIn) pointAlias(name, arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aliases[name] = arn
}

// disable disables a key, as DisableKey does: GenerateDataKey under it is
// refused with DisabledException (AWS KMS API Reference, GenerateDataKey,
// Errors).
func (s *kmsStandIn) disable(arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.off[arn] = true
}

func (s *kmsStandIn) failWith(op, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[op] = code
}

func (s *kmsStandIn) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *kmsStandIn) requested(op string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keyIDs[op])
}

// resolve maps a KeyId to a key ARN, as KMS does.
func (s *kmsStandIn) resolve(id string) (string, bool) {
	if i := strings.Index(id, ":alias/"); i >= 0 {
		id = id[i+1:]
	}
	if arn, ok := s.aliases[id]; ok {
		return arn, true
	}
	for arn := range s.keys {
		if id == arn || strings.HasSuffix(arn, "/"+id) {
			return arn, true
		}
	}
	return "", false
}

func contextAAD(ec map[string]string) []byte {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		b.WriteString(k + "\x00" + ec[k] + "\x00")
	}
	return b.Bytes()
}

func (s *kmsStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "TrentService.")
	body, _ := io.ReadAll(r.Body)
	var in struct {
		KeyId             string
		KeySpec           string
		CiphertextBlob    []byte
		EncryptionContext map[string]string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		fail(w, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	s.keyIDs[op] = append(s.keyIDs[op], in.KeyId)
	if code := s.fail[op]; code != "" {
		fail(w, code, "injected")
		return
	}
	answer := func(arn string) string {
		if s.answer != "" {
			return s.answer
		}
		return arn
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch op {
	case "DescribeKey":
		arn, ok := s.resolve(in.KeyId)
		if !ok {
			fail(w, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyMetadata": map[string]any{
			"Arn": arn, "KeyId": arn[strings.LastIndex(arn, "/")+1:], "KeyState": "Enabled",
			"KeySpec": "SYMMETRIC_DEFAULT", "KeyUsage": "ENCRYPT_DECRYPT"}})
	case "GenerateDataKey":
		arn, ok := s.resolve(in.KeyId)
		if !ok {
			fail(w, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
			return
		}
		if s.off[arn] {
			fail(w, "DisabledException", arn+" is disabled.")
			return
		}
		if in.KeySpec != "AES_256" {
			fail(w, "ValidationException", "KeySpec must be AES_256 here")
			return
		}
		plain := make([]byte, 32)
		_, _ = rand.Read(plain)
		nonce := make([]byte, 12)
		_, _ = rand.Read(nonce)
		blob := append([]byte{byte(slices.Index(s.order, arn))}, s.keys[arn].Seal(nonce, nonce, plain, contextAAD(in.EncryptionContext))...)
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyId": answer(arn), "Plaintext": plain, "CiphertextBlob": blob})
	case "Decrypt":
		if len(in.CiphertextBlob) < 13 || int(in.CiphertextBlob[0]) >= len(s.order) {
			fail(w, "InvalidCiphertextException", "")
			return
		}
		arn := s.order[in.CiphertextBlob[0]]
		if in.KeyId != "" {
			if named, ok := s.resolve(in.KeyId); !ok || named != arn {
				fail(w, "IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation.")
				return
			}
		}
		blob := in.CiphertextBlob[1:]
		plain, err := s.keys[arn].Open(nil, blob[:12], blob[12:], contextAAD(in.EncryptionContext))
		if err != nil {
			fail(w, "InvalidCiphertextException", "")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyId": answer(arn), "Plaintext": plain, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"})
	default:
		fail(w, "UnknownOperationException", op)
	}
}

func fail(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	status := http.StatusBadRequest
	if code == "KMSInternalException" || code == "KeyUnavailableException" {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

func TestNewRefusesMisconfiguration(t *testing.T) {
	_, client := newKMS(t)
	ctx := context.Background()
	if _, err := kmsseal.New(ctx, nil, keyARN); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := kmsseal.New(ctx, client, ""); err == nil {
		t.Error("empty key id accepted")
	}
	if _, err := kmsseal.New(ctx, client, "alias/missing"); err == nil || !strings.Contains(err.Error(), "alias/missing does not exist") {
		t.Errorf("unknown key: %v; want an error saying it does not exist", err)
	}
	// A previous key deleted after its retry horizon fails every cold start
	// until it is unlisted: the error says what to remove, and where.
	if _, err := kmsseal.New(ctx, client, keyARN, func(o *kmsseal.Options) { o.PreviousKeys = []string{"alias/missing"} }); err == nil ||
		!strings.Contains(err.Error(), "remove it from PreviousKeys ("+kmsseal.EnvPreviousKeys+")") {
		t.Errorf("unknown previous key: %v; want an error saying to remove it from PreviousKeys", err)
	}
}

// New resolves an alias to its key ARN (one DescribeKey), and no call ever
// names the alias: GenerateDataKey and Decrypt name the key ARN.
func TestCallsNameTheKeyARN(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	for _, id := range []string{alias, "arn:aws:kms:eu-west-1:111122223333:" + alias, "1234abcd-12ab-34cd-56ef-1234567890ab", keyARN} {
		keys, err := kmsseal.New(ctx, client, id)
		if err != nil || keys.KeyARN() != keyARN {
			t.Fatalf("New(%s) = %v, %v; want the key ARN", id, keys, err)
		}
		plain, blob, err := keys.GenerateDataKey(ctx, map[string]string{"purpose": "a"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := keys.Decrypt(ctx, blob, map[string]string{"purpose": "a"}); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Decrypt = %v; want the data key", err)
		}
	}
	for _, op := range []string{"GenerateDataKey", "Decrypt"} {
		for _, id := range ks.requested(op) {
			if id != keyARN {
				t.Errorf("%s named %q; want the key ARN", op, id)
			}
		}
	}
}

// A manual rotation by alias, as the KMS Developer Guide's "Rotating keys
// manually" describes: the alias is pointed at a new key. A process started
// after it seals under the new key and, with the old key among its
// PreviousKeys, opens what was sealed before; a process started before it
// finds the new key through its alias when a data key it cannot open
// arrives, and from then on seals under it. Before Decrypt named the key
// ARN it named the alias, and every outcome sealed under the old key
// failed with IncorrectKeyException in every cold process.
func TestManualRotationByAlias(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *kmsseal.Options) { o.Now = func() time.Time { return now } }
	store := memstore.New()
	guard := func(keys seal.KeyService) *lambdaidem.Guard {
		sealer, err := seal.New(keys)
		if err != nil {
			t.Fatal(err)
		}
		g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	call := func(key string) lambdaidem.Call[string] {
		return lambdaidem.Call[string]{Operation: "Refund", Key: key, Fingerprint: "fp-" + key}
	}
	runs := 0
	fn := func(context.Context) (string, error) { runs++; return "refunded", nil }
	do := func(g *lambdaidem.Guard, key string) error {
		out, err := lambdaidem.Do(ctx, g, call(key), fn)
		if err == nil && out != "refunded" {
			t.Fatalf("Do(%s) = %q", key, out)
		}
		return err
	}

	before, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	oldProcess := guard(before)
	if err := do(oldProcess, "sealed-before"); err != nil {
		t.Fatal(err)
	}

	ks.pointAlias(alias, key2ARN) // the rotation
	after, err := kmsseal.New(ctx, client, alias, clock, func(o *kmsseal.Options) { o.PreviousKeys = []string{keyARN} })
	if err != nil || after.KeyARN() != key2ARN {
		t.Fatalf("New after the rotation: %v, %v; want the new key", after, err)
	}
	if err := do(guard(after), "sealed-before"); err != nil || runs != 1 {
		t.Fatalf("a new process replaying an outcome sealed before the rotation: %v after %d runs", err, runs)
	}
	if err := do(guard(after), "sealed-after"); err != nil {
		t.Fatal(err)
	}

	// Without the old key among its PreviousKeys, a new process refuses
	// (permanently: it needs configuring, not retrying).
	forgetful, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := do(guard(forgetful), "sealed-before"); !errors.Is(err, lambdaidem.ErrKeyRefused) {
		t.Fatalf("without PreviousKeys: %v; want ErrKeyRefused", err)
	}

	// The old process meets an outcome of the new key: it looks its alias
	// up again (a minute after its last look) and follows it.
	now = now.Add(2 * time.Minute)
	if err := do(guard(before), "sealed-after"); err != nil || runs != 2 {
		t.Fatalf("a process started before the rotation replaying a new outcome: %v after %d runs", err, runs)
	}
	if before.KeyARN() != key2ARN {
		t.Fatalf("the old process generates under %s; want the new key", before.KeyARN())
	}
	for _, id := range ks.requested("Decrypt") {
		if strings.Contains(id, "alias") || (id != keyARN && id != key2ARN) {
			t.Fatalf("Decrypt named %q; want a key ARN", id)
		}
	}
}

// A process started before a manual rotation by alias generates its next
// data key under the key the alias names now, whether or not it met an
// outcome of the new key: "change the target KMS key of the alias" is how
// the application moves to the new key (AWS KMS Developer Guide, "Rotate
// keys manually"). Otherwise it seals under the old key for as long as it
// lives, past the retry horizon after which the old key may leave
// PreviousKeys and be disabled (then GenerateDataKey fails with
// DisabledException and the process answers nothing). The alias is looked
// up at most once a minute, when a data key is generated; a KeyService
// made from a key ARN never looks again.
func TestDataKeysFollowTheAlias(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *kmsseal.Options) { o.Now = func() time.Time { return now } }
	ec := map[string]string{"purpose": "a"}
	byAlias, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	byARN, err := kmsseal.New(ctx, client, keyARN, clock)
	if err != nil {
		t.Fatal(err)
	}
	_, old, err := byAlias.GenerateDataKey(ctx, ec)
	if err != nil {
		t.Fatal(err)
	}
	ks.pointAlias(alias, key2ARN) // the rotation
	described := ks.count("DescribeKey")
	now = now.Add(30 * time.Second)
	if _, _, err := byAlias.GenerateDataKey(ctx, ec); err != nil || ks.count("DescribeKey") != described {
		t.Fatalf("within a minute of the last look: %v, %d DescribeKey calls; want none", err, ks.count("DescribeKey")-described)
	}
	now = now.Add(time.Minute)
	for _, keys := range []*kmsseal.KeyService{byAlias, byARN} {
		if _, _, err := keys.GenerateDataKey(ctx, ec); err != nil {
			t.Fatal(err)
		}
	}
	if got := ks.requested("GenerateDataKey"); got[len(got)-2] != key2ARN || got[len(got)-1] != keyARN {
		t.Fatalf("after the rotation the alias's process generated under %s and the ARN's under %s; want the new key, then the one named", got[len(got)-2], got[len(got)-1])
	}
	if byAlias.KeyARN() != key2ARN || ks.count("DescribeKey") != described+1 {
		t.Fatalf("KeyARN %s after %d DescribeKey calls; want the new key after one", byAlias.KeyARN(), ks.count("DescribeKey")-described)
	}
	if _, err := byAlias.Decrypt(ctx, old, ec); err != nil {
		t.Fatalf("a data key of the old key after following the alias: %v; want it still opened", err)
	}
}

// An answer naming another key than the one asked for is refused, for
// GenerateDataKey and Decrypt alike.
func TestAnswerForAnotherKeyIsRefused(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	keys, err := kmsseal.New(ctx, client, keyARN)
	if err != nil {
		t.Fatal(err)
	}
	_, blob, err := keys.GenerateDataKey(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ks.mu.Lock()
	ks.answer = key2ARN
	ks.mu.Unlock()
	var kse *lambdaidem.KeyServiceError
	if _, _, err := keys.GenerateDataKey(ctx, nil); !errors.As(err, &kse) || !kse.Permanent {
		t.Errorf("GenerateDataKey answered for another key: %v; want a permanent refusal", err)
	}
	if _, err := keys.Decrypt(ctx, blob, nil); !errors.As(err, &kse) || !kse.Permanent || !strings.Contains(err.Error(), key2ARN) {
		t.Errorf("Decrypt answered for another key: %v; want a permanent refusal naming it", err)
	}
}

// KMS errors become KeyServiceErrors naming the key ARN and the IAM
// action, permanent for what only an operator can fix (AWS KMS API
// Reference, Decrypt, Errors).
func TestKMSErrorsAreClassified(t *testing.T) {
	cases := []struct {
		code      string
		permanent bool
	}{
		{"ThrottlingException", false},
		{"KMSInternalException", false}, // HTTP 500
		{"KeyUnavailableException", false},
		{"DependencyTimeoutException", false},
		{"AccessDeniedException", true},
		{"DisabledException", true},
		{"KMSInvalidStateException", true}, // pending deletion
		{"NotFoundException", true},
		{"InvalidCiphertextException", true},
	}
	ks, client := newKMS(t)
	ctx := context.Background()
	keys, err := kmsseal.New(ctx, client, alias)
	if err != nil {
		t.Fatal(err)
	}
	_, blob, err := keys.GenerateDataKey(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, op := range []string{"GenerateDataKey", "Decrypt"} {
			ks.failWith(op, c.code)
			if op == "GenerateDataKey" {
				_, _, err = keys.GenerateDataKey(ctx, nil)
			} else {
				_, err = keys.Decrypt(ctx, blob, nil)
			}
			ks.failWith(op, "")
			var kse *lambdaidem.KeyServiceError
			if !errors.As(err, &kse) || kse.Permanent != c.permanent || kse.Key != keyARN || kse.Action != "kms:"+op || !strings.Contains(err.Error(), c.code) {
				t.Errorf("%s failing with %s: %#v; want a KeyServiceError for %s, kms:%s, permanent %v", op, c.code, err, keyARN, op, c.permanent)
			}
		}
	}
}

// A Guard whose outcomes are sealed under the KMS key: the table holds
// ciphertext, a duplicate replays the value, and a cold process (a new
// Sealer) opens it with one Decrypt.
func TestOutcomesSealedUnderKMS(t *testing.T) {
	ks, client := newKMS(t)
	keys, err := kmsseal.New(context.Background(), client, alias)
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	guard := func() *lambdaidem.Guard { return sealedGuard(t, store, keys) }
	c := lambdaidem.Call[string]{Operation: "Refund", Key: "r-1", Fingerprint: "fp"}
	runs := 0
	fn := func(context.Context) (string, error) { runs++; return "refund sent to ada@example.com", nil }
	warm := guard()
	for range 2 {
		if out, err := lambdaidem.Do(context.Background(), warm, c, fn); err != nil || out != "refund sent to ada@example.com" {
			t.Fatalf("Do = %q, %v", out, err)
		}
	}
	cold := guard()
	if out, err := lambdaidem.Do(context.Background(), cold, c, fn); err != nil || out != "refund sent to ada@example.com" || runs != 1 {
		t.Fatalf("cold replay = %q, %v after %d runs", out, err, runs)
	}
	for _, r := range store.Records() {
		if bytes.Contains(r.Outcome, []byte("ada@")) {
			t.Fatalf("the table holds the plain outcome %q", r.Outcome)
		}
	}
	if g, d := ks.count("GenerateDataKey"), ks.count("Decrypt"); g != 2 || d != 1 {
		t.Fatalf("KMS calls: %d GenerateDataKey, %d Decrypt; want 2 (one a process: the cold one keys its fingerprint) and 1 (data keys cached)", g, d)
	}
}

// Right after a manual rotation by alias, a process started before it
// meets a data key of the new key: it looks the alias up at once and opens
// it, instead of refusing it ("retrying will not help") until its minute
// between look-ups has passed (the security review of issue 32).
func TestARotationIsFollowedAtOnce(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *kmsseal.Options) { o.Now = func() time.Time { return now } }
	ec := map[string]string{"purpose": "a"}
	before, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	ks.pointAlias(alias, key2ARN) // the rotation
	after, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	_, sealedAfter, err := after.GenerateDataKey(ctx, ec)
	if err != nil {
		t.Fatal(err)
	}
	described := ks.count("DescribeKey")
	if _, err := before.Decrypt(ctx, sealedAfter, ec); err != nil {
		t.Fatalf("a data key of the new key, right after the rotation: %v; want it opened", err)
	}
	if got := ks.count("DescribeKey") - described; got != 1 || before.KeyARN() != key2ARN {
		t.Fatalf("%d DescribeKey calls, key %s; want one look-up, and the new key followed", got, before.KeyARN())
	}
}

// A data key no accepted key opens, and that the alias does not explain,
// is refused after one look-up of the alias; a second one within a few
// seconds is not looked up again (a flood must not exhaust the DescribeKey
// quota) and answers unavailable for now, since the alias may have moved
// meanwhile; a few seconds later the alias is looked up again.
func TestForeignDataKeysLookTheAliasUpSparingly(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *kmsseal.Options) { o.Now = func() time.Time { return now } }
	ec := map[string]string{"purpose": "a"}
	byARN, err := kmsseal.New(ctx, client, keyARN)
	if err != nil {
		t.Fatal(err)
	}
	_, foreign, err := byARN.GenerateDataKey(ctx, ec)
	if err != nil {
		t.Fatal(err)
	}
	ks.pointAlias(alias, key2ARN)
	keys, err := kmsseal.New(ctx, client, alias, clock) // without the old key among PreviousKeys
	if err != nil {
		t.Fatal(err)
	}
	open := func() (permanent bool, lookups int) {
		t.Helper()
		described := ks.count("DescribeKey")
		_, err := keys.Decrypt(ctx, foreign, ec)
		var kse *lambdaidem.KeyServiceError
		if !errors.As(err, &kse) {
			t.Fatalf("Decrypt of a foreign data key: %v; want a KeyServiceError", err)
		}
		return kse.Permanent, ks.count("DescribeKey") - described
	}
	if permanent, lookups := open(); !permanent || lookups != 1 {
		t.Fatalf("first foreign data key: permanent %v after %d look-ups; want refused after one", permanent, lookups)
	}
	now = now.Add(time.Second)
	if permanent, lookups := open(); permanent || lookups != 0 {
		t.Fatalf("second within a second: permanent %v after %d look-ups; want unavailable for now, none", permanent, lookups)
	}
	now = now.Add(10 * time.Second)
	if permanent, lookups := open(); !permanent || lookups != 1 {
		t.Fatalf("ten seconds later: permanent %v after %d look-ups; want refused after one", permanent, lookups)
	}
}

// The old key is disabled right after a manual rotation by alias, within
// the minute a process waits between look-ups before a data key: its
// GenerateDataKey, refused, looks the alias up at once and generates under
// the new key instead of failing every seal until the minute is over.
func TestGenerateFollowsTheAliasWhenTheOldKeyIsDisabled(t *testing.T) {
	ks, client := newKMS(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func(o *kmsseal.Options) { o.Now = func() time.Time { return now } }
	keys, err := kmsseal.New(ctx, client, alias, clock)
	if err != nil {
		t.Fatal(err)
	}
	ks.pointAlias(alias, key2ARN)
	ks.disable(keyARN)
	now = now.Add(10 * time.Second)
	if _, _, err := keys.GenerateDataKey(ctx, nil); err != nil {
		t.Fatalf("GenerateDataKey after the rotation and the old key disabled: %v; want a data key of the new key", err)
	}
	if got := ks.requested("GenerateDataKey"); got[len(got)-1] != key2ARN || keys.KeyARN() != key2ARN {
		t.Fatalf("generated under %s; want the new key", got[len(got)-1])
	}
	// A key that is disabled and that no alias move explains stays refused.
	byARN, err := kmsseal.New(ctx, client, key2ARN)
	if err != nil {
		t.Fatal(err)
	}
	ks.disable(key2ARN)
	var kse *lambdaidem.KeyServiceError
	if _, _, err := byARN.GenerateDataKey(ctx, nil); !errors.As(err, &kse) || !kse.Permanent {
		t.Fatalf("a disabled key named by its ARN: %v; want a permanent refusal", err)
	}
}

// sealedGuard returns a Guard over store whose outcomes a Sealer over keys
// seals: a process of its own (its own data key cache).
func sealedGuard(t *testing.T, store lambdaidem.Store, keys seal.KeyService) *lambdaidem.Guard {
	t.Helper()
	sealer, err := seal.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
	if err != nil {
		t.Fatal(err)
	}
	return g
}
