package powertools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// cases is testdata/cases.json: the inputs both generators read.
type cases struct {
	Keys []struct {
		Name         string `json:"name"`
		Selection    string `json:"selection"`
		FunctionName string `json:"function_name"`
		Handler      string `json:"handler"`
		KeyPrefix    string `json:"key_prefix"`
		HashFunction string `json:"hash_function"`
	} `json:"keys"`
	Outcomes []struct {
		Name    string `json:"name"`
		Outcome string `json:"outcome"`
	} `json:"outcomes"`
}

// vectors is what a generator computed: dev/powertools/vectors.py (with
// Python's json and hashlib, as Powertools Python does) or
// dev/powertools/vectors.mjs (with the real Powertools TypeScript package).
type vectors struct {
	Keys []struct {
		Name       string `json:"name"`
		Key        string `json:"key"`
		Missing    bool   `json:"missing"`
		Validation string `json:"validation"`
	} `json:"keys"`
	Outcomes []struct {
		Name    string          `json:"name"`
		Data    json.RawMessage `json:"data"`
		Replay  string          `json:"replay"`
		Refused string          `json:"refused"`
	} `json:"outcomes"`
}

func load(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.String()
}

// The keys, validation hashes and stored data of Powertools Python and
// TypeScript, against vectors their own encoders computed.
func TestVectors(t *testing.T) {
	var in cases
	load(t, "cases.json", &in)
	for _, lang := range []struct {
		language powertools.Language
		file     string
	}{{powertools.Python, "python.json"}, {powertools.TypeScript, "typescript.json"}} {
		t.Run(lang.language.String(), func(t *testing.T) {
			var want vectors
			load(t, lang.file, &want)
			if len(want.Keys) != len(in.Keys) || len(want.Outcomes) != len(in.Outcomes) {
				t.Fatalf("%s holds %d keys and %d outcomes for %d and %d cases: run make powertools-vectors",
					lang.file, len(want.Keys), len(want.Outcomes), len(in.Keys), len(in.Outcomes))
			}
			for i, c := range in.Keys {
				w := want.Keys[i]
				cfg := powertools.Config{
					Language:     lang.language,
					FunctionName: c.FunctionName,
					Handler:      c.Handler,
					KeyPrefix:    c.KeyPrefix,
					HashFunction: c.HashFunction,
				}
				sel := json.RawMessage(c.Selection)
				key, err := cfg.Key(sel)
				switch {
				case w.Missing:
					if !errors.Is(err, powertools.ErrNoKey) {
						t.Errorf("%s: Key = %q, %v; want ErrNoKey", c.Name, key, err)
					}
				case err != nil || key != w.Key:
					canon, _ := cfg.Canonical(sel)
					t.Errorf("%s: Key = %q, %v; want %q (hashed %s)", c.Name, key, err, w.Key, canon)
				}
				if w.Validation == "" {
					continue
				}
				if v, err := cfg.ValidationHash(sel); err != nil || v != w.Validation {
					t.Errorf("%s: ValidationHash = %q, %v; want %q", c.Name, v, err, w.Validation)
				}
			}
			cfg := powertools.Config{Language: lang.language}
			for i, c := range in.Outcomes {
				w := want.Outcomes[i]
				data, err := cfg.EncodeData(json.RawMessage(c.Outcome))
				if w.Refused != "" {
					if !errors.Is(err, powertools.ErrData) {
						t.Errorf("%s: EncodeData = %s, %v; want ErrData (Powertools: %s)", c.Name, data, err, w.Refused)
					}
					continue
				}
				if err != nil || string(data) != compact(t, w.Data) {
					t.Errorf("%s: EncodeData = %s, %v; want %s", c.Name, data, err, compact(t, w.Data))
				}
				replay, err := cfg.DecodeData(w.Data)
				if err != nil || compact(t, replay) != compact(t, []byte(w.Replay)) {
					t.Errorf("%s: DecodeData = %s, %v; want %s", c.Name, replay, err, w.Replay)
				}
			}
		})
	}
}
