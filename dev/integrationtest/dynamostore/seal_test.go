package dynamostore_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// masterKey is a key service stand-in for the seal package: data keys
// wrapped under one AES key, the encryption context ignored (its checks
// are tested in lambdaidem/seal and kmsseal).
type masterKey struct{ aead cipher.AEAD }

func newMasterKey(t *testing.T) *masterKey {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	return &masterKey{aead}
}

func (m *masterKey) GenerateDataKey(context.Context, map[string]string) ([]byte, []byte, error) {
	plain, nonce := make([]byte, 32), make([]byte, 12)
	_, _ = rand.Read(plain)
	_, _ = rand.Read(nonce)
	return plain, m.aead.Seal(nonce, nonce, plain, nil), nil
}

func (m *masterKey) Decrypt(_ context.Context, blob []byte, _ map[string]string) ([]byte, error) {
	if len(blob) < 12 {
		return nil, errors.New("InvalidCiphertextException")
	}
	return m.aead.Open(nil, blob[:12], blob[12:], nil)
}

// Sealed outcomes over DynamoDB: the data attribute is a Binary of
// ciphertext (never the plain value; a String must be UTF-8, and
// ciphertext is not), small and large outcomes (compressed before
// sealing) and terminal errors replay, and a Guard without the Sealer
// cannot read them.
func TestSealedOutcomesOverDynamoDB(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sealer, err := seal.New(newMasterKey(t))
	if err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Sealer = sealer })
	secret := "card 4242 4242 4242 4242 for ada@example.com"
	cases := []struct {
		key   string
		value string
		err   error
	}{
		{"small", secret, nil},
		{"large", strings.Repeat(secret+";", 100), nil},
		{"declined", "", lambdaidem.Terminal(errors.New("declined: " + secret))},
	}
	for _, c := range cases {
		fn := func(context.Context) (string, error) { return c.value, c.err }
		first, firstErr := lambdaidem.Do(ctx, g, call(c.key), fn)
		again, againErr := lambdaidem.Do(ctx, g, call(c.key), func(context.Context) (string, error) { t.Fatal("ran again"); return "", nil })
		if again != first || (firstErr == nil) != (againErr == nil) || (againErr != nil && againErr.Error() != firstErr.Error()) {
			t.Fatalf("%s: replay %q, %v; want %q, %v", c.key, again, againErr, first, firstErr)
		}
		data, ok := e.record(t, recordKey(c.key))["data"].(*types.AttributeValueMemberB)
		if !ok || bytes.Contains(data.Value, []byte("4242")) || bytes.Contains(data.Value, []byte("ada@")) {
			t.Fatalf("%s: data attribute %#v; want a Binary of ciphertext", c.key, e.record(t, recordKey(c.key))["data"])
		}
		// Without the Sealer a Guard can neither compare the keyed
		// fingerprint nor open the outcome: it refuses, and never runs.
		if out, err := lambdaidem.Do(ctx, e.guard(t, nil), call(c.key), func(context.Context) (string, error) { t.Fatal("ran without the Sealer"); return "", nil }); err == nil {
			t.Fatalf("%s: a Guard without the Sealer replayed %q; want a refusal", c.key, out)
		}
	}
}
