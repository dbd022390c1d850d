package powertools_test

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Java and .NET as read from their sources (unverified against the
// libraries): what text each hashes, and the prefix.
func TestJavaAndDotNetFromSources(t *testing.T) {
	cases := []struct {
		lang      powertools.Language
		handler   string
		selection string
		hashed    string
	}{
		// Java: a textual node hashes its text, not its JSON.
		{powertools.Java, "handleRequest", `"order-1001"`, "order-1001"},
		{powertools.Java, "", `1001`, "1001"},
		{powertools.Java, "", `10.50`, "10.5"},
		{powertools.Java, "", `1e7`, "1.0E7"},
		{powertools.Java, "", `0.0001`, "1.0E-4"},
		{powertools.Java, "", `true`, "true"},
		// Jackson's compact JSON, members in the event's order.
		{powertools.Java, "", `{"b": 1, "a": "\u00e9\u0001"}`, `{"b":1,"a":"é\u0001"}`},
		// .NET: JsonElement.ToString().
		{powertools.DotNet, "Handle", `"order-1001"`, "order-1001"},
		{powertools.DotNet, "", `10.50`, "10.50"},
		{powertools.DotNet, "", `true`, "True"},
		{powertools.DotNet, "", `null`, ""},
		{powertools.DotNet, "", `{"b": "<é>", "a": 1}`, `{"b":"\u003C\u00E9\u003E","a":1}`},
	}
	for _, c := range cases {
		cfg := powertools.Config{Language: c.lang, FunctionName: "orders", Handler: c.handler}
		prefix := "orders"
		if c.handler != "" {
			prefix += "." + c.handler
		}
		got, err := cfg.Key(json.RawMessage(c.selection))
		if err != nil || got != prefix+"#"+md5hex(c.hashed) {
			text, _ := cfg.Canonical(json.RawMessage(c.selection))
			t.Errorf("%s %s: Key = %q, %v (hashed %q); want the md5 of %q", c.lang, c.selection, got, err, text, c.hashed)
		}
	}
	// Java prints the digest as a number: a leading zero nibble of a
	// SHA-256 digest is dropped (%032x pads to 32 digits only).
	for i := 0; ; i++ {
		s := strings.Repeat("x", i)
		sum := sha256.Sum256([]byte(s))
		if sum[0]>>4 != 0 {
			continue
		}
		cfg := powertools.Config{Language: powertools.Java, FunctionName: "f", HashFunction: "SHA-256"}
		got, err := cfg.ValidationHash(s)
		want := new(big.Int).SetBytes(sum[:]).Text(16)
		if err != nil || got != want || len(got) == 64 {
			t.Errorf("Java sha256 of %q = %q, %v; want %q (63 digits or fewer)", s, got, err, want)
		}
		break
	}
	// Missing keys: Java skips a container of nulls, .NET hashes anyway.
	if _, err := (powertools.Config{Language: powertools.Java}).Key(json.RawMessage(`{"a": null}`)); !errors.Is(err, powertools.ErrNoKey) {
		t.Errorf("Java {a: null}: %v; want ErrNoKey", err)
	}
	if _, err := (powertools.Config{Language: powertools.DotNet}).Key(json.RawMessage(`null`)); err != nil {
		t.Errorf(".NET null: %v; want a key", err)
	}
	// Java stores a string result as it is and reads it back as a string.
	java := powertools.Config{Language: powertools.Java}
	data, err := java.EncodeData(json.RawMessage(`"captured"`))
	if err != nil || string(data) != `{"S":"captured"}` {
		t.Errorf("Java EncodeData(string) = %s, %v", data, err)
	}
	if replay, err := java.DecodeData(data); err != nil || string(replay) != `"captured"` {
		t.Errorf("Java DecodeData = %s, %v", replay, err)
	}
}

func TestPrefix(t *testing.T) {
	cases := []struct {
		cfg  powertools.Config
		want string
	}{
		{powertools.Config{Language: powertools.Python}, "test-func."},
		{powertools.Config{Language: powertools.Python, FunctionName: "f", Handler: "app.handler"}, "f.app.handler"},
		{powertools.Config{Language: powertools.Python, FunctionName: "f", KeyPrefix: "p"}, "p"},
		{powertools.Config{Language: powertools.TypeScript, FunctionName: "f", Handler: "ignored"}, "f"},
		{powertools.Config{Language: powertools.TypeScript, FunctionName: "f", KeyPrefix: " p "}, "p"},
		{powertools.Config{Language: powertools.Java}, "testFunction"},
		{powertools.Config{Language: powertools.DotNet, FunctionName: "f", Handler: "H"}, "f.H"},
	}
	for _, c := range cases {
		if got := c.cfg.Prefix(); got != c.want {
			t.Errorf("%+v: Prefix = %q; want %q", c.cfg, got, c.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := (powertools.Config{}).Key("x"); !errors.Is(err, powertools.ErrConfig) {
		t.Errorf("no language: %v; want ErrConfig", err)
	}
	if _, err := (powertools.Config{Language: powertools.Python, HashFunction: "crc32"}).Key("x"); !errors.Is(err, powertools.ErrConfig) {
		t.Errorf("crc32: %v; want ErrConfig", err)
	}
	py := powertools.Config{Language: powertools.Python}
	if _, err := py.Key(json.RawMessage(`{"a":`)); !errors.Is(err, powertools.ErrSelection) {
		t.Errorf("truncated selection: %v; want ErrSelection", err)
	}
	if _, err := py.Key(json.RawMessage(strings.Repeat("[", 2000) + strings.Repeat("]", 2000))); !errors.Is(err, powertools.ErrSelection) {
		t.Errorf("deep selection: %v; want ErrSelection", err)
	}
	for _, attr := range []string{`{"N":"1"}`, `{"S":"{"}`, `not json`} {
		if _, err := py.DecodeData(json.RawMessage(attr)); !errors.Is(err, powertools.ErrData) {
			t.Errorf("Python DecodeData(%s): %v; want ErrData", attr, err)
		}
	}
	ts := powertools.Config{Language: powertools.TypeScript}
	for _, attr := range []string{`{"SS":["a"]}`, `{"B":"AAAA"}`, `{"N":"x"}`, `{"S":"a","N":"1"}`, `{"M":{"a":{"BS":[]}}}`} {
		if _, err := ts.DecodeData(json.RawMessage(attr)); !errors.Is(err, powertools.ErrData) {
			t.Errorf("TypeScript DecodeData(%s): %v; want ErrData", attr, err)
		}
	}
	// A selection given as a Go value is encoded by encoding/json first.
	a, _ := py.Key(map[string]any{"id": "x", "n": 1})
	b, _ := py.Key(json.RawMessage(`{"n": 1, "id": "x"}`))
	if a == "" || a != b {
		t.Errorf("Go value key %q != JSON key %q", a, b)
	}
}

func TestJudge(t *testing.T) {
	now := time.UnixMilli(1_000_000_500)
	cases := []struct {
		r    powertools.Record
		want powertools.State
	}{
		{powertools.Record{Status: "COMPLETED", Expiration: 1_000_000}, powertools.Completed},
		{powertools.Record{Status: "COMPLETED", Expiration: 999_999}, powertools.Absent},
		{powertools.Record{Status: "INPROGRESS", Expiration: 1_000_100, InProgressExpiration: 1_000_000_501}, powertools.InProgress},
		{powertools.Record{Status: "INPROGRESS", Expiration: 1_000_100, InProgressExpiration: 1_000_000_499}, powertools.Absent},
		{powertools.Record{Status: "INPROGRESS", Expiration: 1_000_100}, powertools.InProgress},
		{powertools.Record{Status: "INPROGRESS", Expiration: 999_999, InProgressExpiration: 2_000_000_000}, powertools.Absent},
		{powertools.Record{Status: "EXPIRED", Expiration: 1_000_100}, powertools.InProgress},
	}
	for _, c := range cases {
		if got := powertools.Judge(c.r, now); got != c.want {
			t.Errorf("Judge(%+v) = %v; want %v", c.r, got, c.want)
		}
	}
}

// A selection as []byte holding JSON is parsed as written, like a
// json.RawMessage (the documented contract); before, encoding/json turned it
// into a base64 string and the key was another one, silently. A lone UTF-16
// surrogate escape, which Python and JavaScript keep and encoding/json turns
// into U+FFFD, is refused rather than hashed into a key Powertools never
// wrote.
func TestSelectionBytesAndLoneSurrogates(t *testing.T) {
	for _, c := range []powertools.Config{{Language: powertools.Python, FunctionName: "f", Handler: "app.h"}, {Language: powertools.TypeScript, FunctionName: "f"}} {
		raw, err := c.Key(json.RawMessage(`{"id": "order-1"}`))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := c.Key([]byte(`{"id": "order-1"}`)); err != nil || b != raw {
			t.Errorf("%v: Key([]byte) = %q, %v; want %q as for json.RawMessage", c.Language, b, err, raw)
		}
		for _, sel := range []string{`"\ud800"`, `{"k": "a\udc00b"}`, `"\ud83dx"`, `["\uDBFF\u0041"]`} {
			if k, err := c.Key(json.RawMessage(sel)); !errors.Is(err, powertools.ErrSelection) {
				t.Errorf("%v: Key(%s) = %q, %v; want ErrSelection", c.Language, sel, k, err)
			}
		}
		for _, sel := range []string{`"\ud83d\ude00"`, `"\\ud800"`, `"a\\\\ud800"`} {
			if _, err := c.Key(json.RawMessage(sel)); err != nil {
				t.Errorf("%v: Key(%s): %v; want a key (a pair, or an escaped backslash)", c.Language, sel, err)
			}
		}
	}
}
