package powertools

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// Language is the Powertools implementation whose records are read and
// written.
type Language int

// The Powertools languages. Java and .NET are derived from their sources
// and not yet checked against the libraries.
const (
	Python Language = iota + 1
	TypeScript
	Java
	DotNet
)

// String names the language.
func (l Language) String() string {
	switch l {
	case Python:
		return "Python"
	case TypeScript:
		return "TypeScript"
	case Java:
		return "Java"
	case DotNet:
		return ".NET"
	}
	return fmt.Sprintf("Language(%d)", int(l))
}

// Errors of this package, for errors.Is.
var (
	// ErrConfig marks a Config that names no language or an unknown hash.
	ErrConfig = errors.New("powertools: invalid configuration")
	// ErrNoKey marks a selection for which Powertools stores no record (a
	// missing key that Powertools skips, as its language decides).
	ErrNoKey = errors.New("powertools: no idempotency key in the selection")
	// ErrSelection marks a selection that is not one JSON value.
	ErrSelection = errors.New("powertools: the selection is not JSON")
	// ErrData marks a `data` attribute this package cannot decode or an
	// outcome it cannot encode as the language would store it.
	ErrData = errors.New("powertools: data not in the language's encoding")
)

// Config says how the old function's Powertools derived its keys.
type Config struct {
	// Language is the old function's Powertools. Required.
	Language Language
	// FunctionName is the old function's AWS_LAMBDA_FUNCTION_NAME. Empty
	// is what Powertools used where it was unset: "test-func" (Python),
	// "" (TypeScript), "testFunction" (Java, .NET).
	FunctionName string
	// Handler is the decorated function as Powertools names it after the
	// function name: Python "<module>.<qualname>" ("app.lambda_handler"),
	// Java and .NET the method name ("handleRequest"). TypeScript 2.x does
	// not use it.
	Handler string
	// KeyPrefix is the key_prefix / keyPrefix option: when set it is the
	// whole prefix (trimmed in TypeScript). Python's decorator takes it
	// from version 3.x on; older ones ignore it.
	KeyPrefix string
	// HashFunction is hash_function / hashFunction: "md5" (default),
	// "sha1", "sha224", "sha256", "sha384", "sha512" (Java's "SHA-256" and
	// .NET's "SHA256" spellings are accepted).
	HashFunction string
}

// newHash returns the configured hash.
func (c Config) newHash() (hash.Hash, error) {
	name := strings.ToLower(strings.ReplaceAll(c.HashFunction, "-", ""))
	switch name {
	case "", "md5":
		return md5.New(), nil
	case "sha1":
		return sha1.New(), nil
	case "sha224":
		return sha256.New224(), nil
	case "sha256":
		return sha256.New(), nil
	case "sha384":
		return sha512.New384(), nil
	case "sha512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("%w: hash function %q", ErrConfig, c.HashFunction)
}

// Validate reports a Config this package cannot use.
func (c Config) Validate() error {
	if c.Language < Python || c.Language > DotNet {
		return fmt.Errorf("%w: no Powertools language", ErrConfig)
	}
	_, err := c.newHash()
	return err
}

// Prefix is the part of every key before "#".
func (c Config) Prefix() string {
	switch c.Language {
	case TypeScript:
		if p := strings.TrimSpace(c.KeyPrefix); p != "" {
			return p
		}
		return c.FunctionName
	case Python:
		if c.KeyPrefix != "" {
			return c.KeyPrefix
		}
		fn := c.FunctionName
		if fn == "" {
			fn = "test-func"
		}
		return fn + "." + c.Handler
	default: // Java, .NET
		if c.KeyPrefix != "" {
			return c.KeyPrefix
		}
		fn := c.FunctionName
		if fn == "" {
			fn = "testFunction"
		}
		if c.Handler != "" {
			fn += "." + c.Handler
		}
		return fn
	}
}

// Key returns the record key Powertools stores for an event whose
// event_key_jmespath selects selection: a json.RawMessage holding the
// selected JSON as the event has it (numbers as written, members in order),
// or any value encoding/json encodes. It returns an error matching
// ErrNoKey where Powertools would have stored no record for the event.
func (c Config) Key(selection any) (string, error) {
	v, err := c.selection(selection)
	if err != nil {
		return "", err
	}
	if c.missing(v) {
		return "", ErrNoKey
	}
	h, err := c.hash(v)
	if err != nil {
		return "", err
	}
	return c.Prefix() + "#" + h, nil
}

// ValidationHash returns the hash Powertools stores in the validation
// attribute for an event whose payload_validation_jmespath selects
// selection (the same encodings as Key, without a prefix).
func (c Config) ValidationHash(selection any) (string, error) {
	v, err := c.selection(selection)
	if err != nil {
		return "", err
	}
	return c.hash(v)
}

func (c Config) selection(selection any) (value, error) {
	if err := c.Validate(); err != nil {
		return value{}, err
	}
	v, err := encodeSelection(selection)
	if err != nil {
		return value{}, fmt.Errorf("%w: %w", ErrSelection, err)
	}
	return v, nil
}

// missing is each language's rule for a selection it keeps no record for.
func (c Config) missing(v value) bool {
	switch c.Language {
	case Python: // is_missing_idempotency_key, then no record
		switch v.kind {
		case kindNull:
			return true
		case kindString:
			return v.text == ""
		case kindArray:
			for _, item := range v.items {
				if item.kind != kindNull {
					return false
				}
			}
			return true
		case kindObject: // all() over the keys, which are never None
			return len(v.members) == 0
		}
		return false
	case TypeScript: // shouldSkipIdempotency: the handler runs unguarded
		return v.kind == kindNull
	case Java: // isMissingIdemPotencyKey, then no record
		switch v.kind {
		case kindNull:
			return true
		case kindArray:
			for _, item := range v.items {
				if item.kind != kindNull {
					return false
				}
			}
			return true
		case kindObject:
			for _, m := range v.members {
				if m.value.kind != kindNull {
					return false
				}
			}
			return true
		}
		return false
	}
	return false // .NET warns and hashes anyway
}

// hash is the language's hash of a selection, encoded as it stores it.
func (c Config) hash(v value) (string, error) {
	h, err := c.newHash()
	if err != nil {
		return "", err
	}
	var text string
	switch c.Language {
	case Python:
		var b strings.Builder
		pythonJSON(&b, v)
		text = b.String()
	case TypeScript:
		var b strings.Builder
		jsJSON(&b, v)
		text = b.String()
	case Java:
		text = javaText(v)
	case DotNet:
		text = dotnetText(v)
	}
	h.Write([]byte(text))
	sum := h.Sum(nil)
	switch c.Language {
	case TypeScript:
		return base64.StdEncoding.EncodeToString(sum), nil
	case Java:
		return javaHex(sum), nil
	}
	return hex.EncodeToString(sum), nil
}

// Canonical returns the text the language hashes for a selection: for
// tests and for comparing with a Powertools function's own log.
func (c Config) Canonical(selection any) (string, error) {
	v, err := c.selection(selection)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	switch c.Language {
	case Python:
		pythonJSON(&b, v)
	case TypeScript:
		jsJSON(&b, v)
	case Java:
		return javaText(v), nil
	case DotNet:
		return dotnetText(v), nil
	}
	return b.String(), nil
}
