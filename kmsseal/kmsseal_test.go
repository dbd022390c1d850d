package kmsseal_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

const keyARN = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"

// kmsStandIn serves KMS's GenerateDataKey and Decrypt over the AWS JSON 1.1
// protocol the SDK speaks (X-Amz-Target: TrentService.<Operation>; blobs
// base64 in JSON; errors as {"__type": ...} with HTTP 400), after the AWS
// KMS API Reference. Data keys are wrapped under a master key that never
// leaves it, with the encryption context as authenticated data, so a
// Decrypt with another context, or naming another key, fails with
// InvalidCiphertextException / IncorrectKeyException as KMS does.
type kmsStandIn struct {
	master cipher.AEAD
	mu     sync.Mutex
	calls  map[string]int
}

func newKMS(t *testing.T) (*kmsStandIn, *kms.Client) {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	s := &kmsStandIn{master: aead, calls: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	client := kms.New(kms.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.AnonymousCredentials{},
	})
	return s, client
}

func contextAAD(ec map[string]string) []byte {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(ec)) {
		b.WriteString(k + "\x00" + ec[k] + "\x00")
	}
	return b.Bytes()
}

func (s *kmsStandIn) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *kmsStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "TrentService.")
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
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
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch op {
	case "GenerateDataKey":
		if in.KeyId != keyARN {
			fail(w, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
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
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyId": keyARN, "Plaintext": plain, "CiphertextBlob": s.master.Seal(nonce, nonce, plain, contextAAD(in.EncryptionContext))})
	case "Decrypt":
		if in.KeyId != "" && in.KeyId != keyARN {
			fail(w, "IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation.")
			return
		}
		if len(in.CiphertextBlob) < 12 {
			fail(w, "InvalidCiphertextException", "")
			return
		}
		plain, err := s.master.Open(nil, in.CiphertextBlob[:12], in.CiphertextBlob[12:], contextAAD(in.EncryptionContext))
		if err != nil {
			fail(w, "InvalidCiphertextException", "")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyId": keyARN, "Plaintext": plain, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"})
	default:
		fail(w, "UnknownOperationException", op)
	}
}

func fail(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

func TestNewRefusesMisconfiguration(t *testing.T) {
	_, client := newKMS(t)
	if _, err := kmsseal.New(nil, keyARN); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := kmsseal.New(client, ""); err == nil {
		t.Error("empty key id accepted")
	}
}

// A Guard whose outcomes are sealed under the KMS key: the table holds
// ciphertext, a duplicate replays the value, and a cold process (a new
// Sealer) opens it with one Decrypt.
func TestOutcomesSealedUnderKMS(t *testing.T) {
	ks, client := newKMS(t)
	keys, err := kmsseal.New(client, keyARN)
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	guard := func() *lambdaidem.Guard {
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
	if g, d := ks.count("GenerateDataKey"), ks.count("Decrypt"); g != 1 || d != 1 {
		t.Fatalf("KMS calls: %d GenerateDataKey, %d Decrypt; want 1 and 1 (data keys cached)", g, d)
	}
}

// KMS errors reach the caller: another key, or another encryption context.
func TestKMSRefusals(t *testing.T) {
	_, client := newKMS(t)
	ctx := context.Background()
	good, _ := kmsseal.New(client, keyARN)
	plain, blob, err := good.GenerateDataKey(ctx, map[string]string{"purpose": "a"})
	if err != nil || len(plain) != 32 {
		t.Fatalf("GenerateDataKey = %d bytes, %v", len(plain), err)
	}
	if got, err := good.Decrypt(ctx, blob, map[string]string{"purpose": "a"}); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt = %v; want the data key", err)
	}
	if _, err := good.Decrypt(ctx, blob, map[string]string{"purpose": "b"}); err == nil || !strings.Contains(err.Error(), "InvalidCiphertextException") {
		t.Fatalf("Decrypt under another context = %v; want InvalidCiphertextException", err)
	}
	other, _ := kmsseal.New(client, "alias/other")
	if _, err := other.Decrypt(ctx, blob, map[string]string{"purpose": "a"}); err == nil || !strings.Contains(err.Error(), "IncorrectKeyException") {
		t.Fatalf("Decrypt naming another key = %v; want IncorrectKeyException", err)
	}
	if _, _, err := other.GenerateDataKey(ctx, nil); err == nil || !strings.Contains(err.Error(), "NotFoundException") {
		t.Fatalf("GenerateDataKey of an unknown key = %v; want NotFoundException", err)
	}
}
