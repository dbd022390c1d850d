package kmsseal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

// The variables [ReadEnv] reads: what the CDK construct's
// lambdaidemcdk.BindSealing sets on a function together with the KMS grant
// they match (cdk/README.md, "Sealing outcomes: the KMS grant").
const (
	// EnvKey names the key outcomes are sealed under: an alias name or a
	// key ARN ([New]'s keyID). Unset: no sealing.
	EnvKey = "IDEMPOTENCY_SEAL_KEY"
	// EnvPreviousKeys names key ARNs outcomes may still be sealed under,
	// comma-separated ([Options].PreviousKeys).
	EnvPreviousKeys = "IDEMPOTENCY_SEAL_PREVIOUS_KEYS"
	// EnvContext holds the Sealer's encryption context as a JSON object of
	// strings (seal.Options.EncryptionContext): the one the grant's
	// condition requires.
	EnvContext = "IDEMPOTENCY_SEAL_CONTEXT"
)

// Env is a function's sealing settings, as [ReadEnv] reads them. The zero
// value (no Key) seals nothing.
type Env struct {
	// Key is [New]'s keyID; "" for no sealing.
	Key string
	// PreviousKeys is [Options].PreviousKeys.
	PreviousKeys []string
	// EncryptionContext is seal.Options.EncryptionContext; nil keeps
	// seal.New's default.
	EncryptionContext map[string]string
}

// ReadEnv reads the sealing settings through getenv (os.Getenv), reporting
// every invalid variable at once, by name. Without [EnvKey] there is no
// sealing, and the other two must be unset too: a deployment that meant to
// seal gets an error, not plain outcomes.
func ReadEnv(getenv func(string) string) (Env, error) {
	e := Env{Key: getenv(EnvKey)}
	prev, ec := getenv(EnvPreviousKeys), getenv(EnvContext)
	if e.Key == "" {
		if prev != "" || ec != "" {
			return e, fmt.Errorf("kmsseal: %s is not set, but %s or %s is: set the key outcomes are sealed under",
				EnvKey, EnvPreviousKeys, EnvContext)
		}
		return e, nil
	}
	var errs []error
	if strings.TrimSpace(e.Key) != e.Key {
		errs = append(errs, fmt.Errorf("kmsseal: %s=%q has leading or trailing blanks", EnvKey, e.Key))
	}
	if prev != "" {
		for _, k := range strings.Split(prev, ",") {
			if k == "" || strings.TrimSpace(k) != k {
				errs = append(errs, fmt.Errorf("kmsseal: %s=%q: want key ARNs separated by commas", EnvPreviousKeys, prev))
				break
			}
			e.PreviousKeys = append(e.PreviousKeys, k)
		}
	}
	if ec != "" {
		if err := json.Unmarshal([]byte(ec), &e.EncryptionContext); err != nil || len(e.EncryptionContext) == 0 {
			errs = append(errs, fmt.Errorf("kmsseal: %s=%q: want a JSON object of strings, such as {\"purpose\":\"lambdaidem-outcome\"}",
				EnvContext, ec))
		}
	}
	return e, errors.Join(errs...)
}

// Sealer returns the Sealer e describes over client (kms.NewFromConfig), or
// nil and no error when e seals nothing: [New] with e.Key and
// e.PreviousKeys, then seal.New with e.EncryptionContext and optFns. Set it
// as lambdaidem.Options.Sealer when it is not nil.
func (e Env) Sealer(ctx context.Context, client Client, optFns ...func(*seal.Options)) (*seal.Sealer, error) {
	if e.Key == "" {
		return nil, nil
	}
	keys, err := New(ctx, client, e.Key, func(o *Options) { o.PreviousKeys = e.PreviousKeys })
	if err != nil {
		return nil, err
	}
	return seal.New(keys, append([]func(*seal.Options){func(o *seal.Options) {
		if e.EncryptionContext != nil {
			o.EncryptionContext = e.EncryptionContext
		}
	}}, optFns...)...)
}
