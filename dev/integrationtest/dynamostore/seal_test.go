package dynamostore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// Sealed outcomes over DynamoDB: the data attribute is a Binary of
// ciphertext (never the plain value; a String must be UTF-8, and
// ciphertext is not), small and large outcomes (compressed before
// sealing) and terminal errors replay, and a Guard without the Sealer
// cannot read them.
func TestSealedOutcomesOverDynamoDB(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sealer, err := seal.New(sealtest.New())
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

// Records settles and reads a sealed table as the functions do, given
// their Sealer: resolve --done stores a sealed outcome that the functions'
// duplicate replays, and Outcome opens one. Without the Sealer it refuses
// (ErrSealed) rather than store an outcome the functions cannot open, or
// hand out ciphertext as the outcome; nothing is written.
func TestRecordsSealAndOpenWithTheFunctionsSealer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	keys := sealtest.New()
	sealer, err := seal.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Sealer = sealer })
	leaveUnknown(t, g, "charge-1")
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"charged"`)})

	plain := e.records(t)
	rec, err := plain.Read(ctx, recordKey("charge-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: time.Now()}); !errors.Is(err, dynamostore.ErrSealed) {
		t.Fatalf("Resolve without the Sealer on a sealed table = %v; want ErrSealed", err)
	}
	if after, _ := plain.Read(ctx, recordKey("charge-1")); after.Status != lambdaidem.StatusUnknown {
		t.Fatalf("after the refusal the record is %s; want it UNKNOWN, untouched", after.Status)
	}

	// A Sealer of its own over the same key service: the operator's.
	opSealer, _ := seal.New(keys)
	sealed := e.records(t, func(o *dynamostore.Options) { o.Sealer = opSealer })
	if err := sealed.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	data, ok := e.record(t, recordKey("charge-1"))["data"].(*types.AttributeValueMemberB)
	if !ok || bytes.Contains(data.Value, []byte("charged")) {
		t.Fatalf("resolved data %#v; want sealed bytes", e.record(t, recordKey("charge-1"))["data"])
	}
	if out, err := lambdaidem.Do(ctx, g, call("charge-1"), func(context.Context) (string, error) { t.Fatal("ran again"); return "", nil }); err != nil || out != "charged" {
		t.Fatalf("the functions' duplicate = %q, %v; want the operator's outcome", out, err)
	}
	done, _ := sealed.Read(ctx, recordKey("charge-1"))
	if o, err := sealed.Outcome(ctx, done); err != nil || string(o.Value) != `"charged"` {
		t.Fatalf("Outcome with the Sealer = %s, %v", o.Value, err)
	}
	if _, err := plain.Outcome(ctx, done); !errors.Is(err, dynamostore.ErrSealed) {
		t.Fatalf("Outcome without the Sealer = %v; want ErrSealed", err)
	}
	keys.Fail(sealtest.Decrypt, sealtest.Denied("kms:Decrypt"))
	if _, err := e.records(t, func(o *dynamostore.Options) { o.Sealer, _ = seal.New(keys) }).Outcome(ctx, done); !errors.Is(err, lambdaidem.ErrKeyRefused) {
		t.Fatalf("Outcome with kms:Decrypt denied = %v; want ErrKeyRefused", err)
	}
}

// Records given a Sealer that is not the functions' (another encryption
// context, another master key) refuses to resolve a record with a keyed
// fingerprint: the outcome it would seal would never open for the
// functions (KMS Decrypt fails on another encryption context, AWS KMS
// Developer Guide, "Encryption context"; and on another key, AWS KMS API
// Reference, Decrypt, IncorrectKeyException). It proves the Sealer first
// by opening the data key the record's fingerprint names; nothing is
// written, and with the functions' Sealer the same resolve succeeds.
func TestRecordsRefuseToSealWithAnotherSealer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	keys := sealtest.New()
	theirs := func(o *seal.Options) { o.EncryptionContext = map[string]string{"purpose": "payments-outcome"} }
	sealer, err := seal.New(keys, theirs)
	if err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Sealer = sealer })
	leaveUnknown(t, g, "charge-1")
	outcome, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: []byte(`"charged"`)})
	rec, err := e.records(t).Read(ctx, recordKey("charge-1"))
	if err != nil {
		t.Fatal(err)
	}
	defaultContext, _ := seal.New(keys)
	otherKey, _ := seal.New(sealtest.New(), theirs)
	for name, s := range map[string]*seal.Sealer{"default encryption context": defaultContext, "another master key": otherKey} {
		r := e.records(t, func(o *dynamostore.Options) { o.Sealer = s })
		err := r.Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: time.Now()})
		if !errors.Is(err, lambdaidem.ErrKeyRefused) {
			t.Fatalf("%s: Resolve = %v; want ErrKeyRefused, nothing written", name, err)
		}
		if after, _ := r.Read(ctx, recordKey("charge-1")); after.Status != lambdaidem.StatusUnknown {
			t.Fatalf("%s: after the refusal the record is %s; want it UNKNOWN, untouched", name, after.Status)
		}
	}
	opSealer, _ := seal.New(keys, theirs)
	if err := e.records(t, func(o *dynamostore.Options) { o.Sealer = opSealer }).Resolve(ctx, rec, dynamostore.Resolution{Done: true, Outcome: outcome, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if out, err := lambdaidem.Do(ctx, g, call("charge-1"), func(context.Context) (string, error) { t.Fatal("ran again"); return "", nil }); err != nil || out != "charged" {
		t.Fatalf("the functions' duplicate = %q, %v; want the operator's outcome", out, err)
	}
}
