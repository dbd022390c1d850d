package dynamostore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// incompressible is n bytes of base64 text from a random source: gzip
// cannot shrink it much, so it tests a cap on stored bytes.
func incompressible(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// A compressed outcome is stored as a Binary (a String must be UTF-8)
// holding a gzip stream that tools inflate (base64 -d | gunzip, or
// Records.Read + lambdaidem.DecodeStoredOutcome, as the lambdaidem command
// does); an outcome below the threshold stays a readable JSON String; both
// replay. Records written uncompressed by an older version (a String of
// JSON) replay under a Guard that compresses.
func TestCompressedOutcomesOverDynamoDB(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	big := strings.Repeat(`{"sku":"SKU-77777","name":"organic cotton shirt","unit_price":19.99},`, 200)
	cases := []struct {
		key, value string
		binary     bool
		guard      func(*lambdaidem.Options)
	}{
		{"small", "ok", false, func(*lambdaidem.Options) {}},
		{"big", big, true, func(*lambdaidem.Options) {}},
		{"big-old", big, false, func(o *lambdaidem.Options) { o.NoCompression = true }},
	}
	reader := e.guard(t, nil) // compression on: reads every form
	for _, c := range cases {
		if _, err := lambdaidem.Do(ctx, e.guard(t, nil, c.guard), call(c.key), func(context.Context) (string, error) { return c.value, nil }); err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		data := e.record(t, recordKey(c.key))["data"]
		switch v := data.(type) {
		case *types.AttributeValueMemberB:
			if !c.binary {
				t.Fatalf("%s: data is a Binary; want a String of JSON", c.key)
			}
			zr, err := gzip.NewReader(bytes.NewReader(v.Value))
			if err != nil {
				t.Fatalf("%s: data is not a gzip stream: %v", c.key, err)
			}
			inflated, _ := io.ReadAll(zr)
			var env struct{ Value string }
			if json.Unmarshal(inflated, &env) != nil || env.Value != c.value {
				t.Fatalf("%s: gunzip gave %d bytes that do not hold the value", c.key, len(inflated))
			}
			if len(v.Value)*3 > len(inflated) {
				t.Errorf("%s: stored %d bytes for %d encoded; want under a third", c.key, len(v.Value), len(inflated))
			}
		case *types.AttributeValueMemberS:
			if c.binary || !json.Valid([]byte(v.Value)) {
				t.Fatalf("%s: data is the String %.40q…; want binary=%v", c.key, v.Value, c.binary)
			}
		default:
			t.Fatalf("%s: data is a %T", c.key, data)
		}
		got, err := lambdaidem.Do(ctx, reader, call(c.key), func(context.Context) (string, error) {
			t.Fatalf("%s: the duplicate ran", c.key)
			return "", nil
		})
		if err != nil || got != c.value {
			t.Fatalf("%s: replay = %.20q…, %v", c.key, got, err)
		}
		rec, err := e.records(t).Read(ctx, recordKey(c.key))
		if err != nil {
			t.Fatal(err)
		}
		o, err := lambdaidem.DecodeStoredOutcome(rec.Outcome)
		var v string
		if err != nil || json.Unmarshal(o.Value, &v) != nil || v != c.value {
			t.Fatalf("%s: Records.Read + DecodeStoredOutcome: %v", c.key, err)
		}
	}
}
